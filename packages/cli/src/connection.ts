// How the API commands (scan, print, card run) reach the service: --server / BOXHUB_URL and the
// API key from --key-file or BOXHUB_API_KEY (never a flag: a command line shows in `ps`). With
// neither, the demo's data/demo.json (written by `boxhub serve --demo`) is used, so the quick
// start needs no setup.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Boxhub } from '@boxhub/sdk';
import { common, type Context, type Flags } from './command.ts';
import { errnoCode, Failed, messageOf, UsageError } from './exit.ts';

export const connectionFlags = { server: common.server, 'key-file': common.keyFile } as const satisfies Flags;

/** A secret from a file named by a flag, else from an environment variable. */
export function secretFrom(file: string | undefined, flag: string, envName: string): string | undefined {
  if (!file) return process.env[envName] || undefined;
  let text;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new UsageError(`cannot read ${flag} ${file}: ${errnoCode(e) ?? messageOf(e)}`);
  }
  if (!text) throw new UsageError(`${flag} ${file} is empty`);
  return text;
}

export async function connect(ctx: Context<typeof connectionFlags>): Promise<Boxhub> {
  const v = ctx.values;
  const demoFile = join(resolve(process.env.BOXHUB_DATA_DIR ?? './data'), 'demo.json');
  const demo = existsSync(demoFile)
    ? (JSON.parse(readFileSync(demoFile, 'utf8')) as { base_url?: string; api_key?: string })
    : undefined;
  const server = v.server ?? (process.env.BOXHUB_URL || undefined) ?? demo?.base_url ?? 'http://127.0.0.1:8080';
  const apiKey = secretFrom(v['key-file'], '--key-file', 'BOXHUB_API_KEY') ?? demo?.api_key;
  if (!apiKey)
    throw new UsageError(
      `an API key is needed: set BOXHUB_API_KEY or give --key-file FILE (no ${demoFile} either: that is where \`boxhub serve --demo\` writes the demo's)`,
    );
  // Said when the service cannot be reached or refuses the key: which of the places it was.
  ctx.found = {
    server: v.server ? '--server' : process.env.BOXHUB_URL ? 'BOXHUB_URL' : demo?.base_url ? demoFile : 'the default',
    key: v['key-file'] ? `--key-file ${v['key-file']}` : process.env.BOXHUB_API_KEY ? 'BOXHUB_API_KEY' : demoFile,
  };
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server ${server} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server ${server}: an http:// or https:// URL`);
  ctx.server = server;
  // Loaded here, not at the top: `--help` of the API commands needs no SDK.
  const { Boxhub } = await import('@boxhub/sdk');
  return new Boxhub({ baseUrl: server, apiKey });
}

/** A device given by uuid, or by the code on its label. */
export async function deviceUuid(boxhub: Boxhub, device: string): Promise<string> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(device)) return device;
  const r = await boxhub.devices.getUuid({ code: device });
  if (!r.uuid) throw new Failed(`no device with code '${device}'`);
  return r.uuid;
}
