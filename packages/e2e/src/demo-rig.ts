// The demo as the README's feedback-card walk-through starts it, for the classroom tests
// (demo-classroom.test.ts, demo-classroom-personal.test.ts): `boxhub serve --demo` as a child
// process, its box bound, and `boxhub card run` as the README runs it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import { BOXHUB_BIN, demoServeEnv, startBoxhub } from '@boxhub/cli/testing/boxhub.ts';
import { Boxhub } from '@boxhub/sdk';

export const bin = BOXHUB_BIN;

/** What the demo's class marked (the file the classroom's log line names). */
export interface Truth {
  template_id: string;
  students: Array<{ student_id: string | null; fills: number[][] }>;
}

export interface CardRunEvent {
  event: string;
  body?: { error_code: number; result?: { student_id: string; fills: number[][] } };
}

export async function startDemo() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-demo-class-'));
  // As `npm start`. BOXHUB_ALLOW_PRIVATE_NETWORKS unset: the demo allows the loopback
  // receivers that `card run` and the template's own pdf_url need.
  const env = demoServeEnv(dataDir);
  delete env.BOXHUB_ALLOW_PRIVATE_NETWORKS;
  const serve = startBoxhub(['serve', '--demo'], env);
  const seen = (re: RegExp) => serve.waitFor(re);
  const close = async () => {
    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0, serve.out.all);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await seen(/boxhub is running at/);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      base_url: string;
      api_key: string;
      device_code: string;
    };
    const sdk = new Boxhub({ baseUrl: demo.base_url, apiKey: demo.api_key });
    const { uuid } = await sdk.devices.getUuid({ code: demo.device_code });
    if (!uuid) throw new Error(`the demo box ${demo.device_code} has no uuid`);
    await sdk.devices.bind({ uuid, name: 'Room 4' });
    const cliEnv = { ...process.env, BOXHUB_URL: demo.base_url, BOXHUB_API_KEY: demo.api_key };
    /** `boxhub card run --json` on the demo box: its events, one per line. */
    const cardRun = async (templateId: string) => {
      const r = await promisify(execFile)(
        process.execPath,
        [bin, 'card', 'run', '--device', demo.device_code, '--template', templateId, '--json'],
        { env: cliEnv, timeout: 120_000 },
      );
      const events = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as CardRunEvent);
      return { events, out: r.stdout + r.stderr };
    };
    return { dataDir, serve, seen, demo, sdk, uuid, cliEnv, cardRun, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
