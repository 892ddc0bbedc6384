// `boxhub release …`: agent releases (docs/updates.md). The key pair and the signature are made
// here, on the operator's machine: the private key never goes to the service. Upload and list
// go through the operator API.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineCommand, defineGroup, common } from '../command.ts';
import { errnoCode, EXIT, messageOf, UsageError } from '../exit.ts';
import { emit } from '../progress.ts';
import { operatorClient, operatorFlags } from '../operator-client.ts';

function read(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${file}: ${errnoCode(e) ?? messageOf(e)}`);
  }
}

const keygen = defineCommand({
  summary: 'a new release signing key pair (Ed25519)',
  usage: '--out DIR',
  description:
    'Writes DIR/release-key.pem (the private key, mode 0600: keep it with the operator, never on\nthe service or a box) and DIR/release-key.pub.pem (the public key: put it on every box, given\nto the agent as --release-key). Refuses to overwrite a key.',
  flags: { out: { type: 'string', arg: 'DIR', required: true, help: 'where the two files go' }, json: common.json },
  json: '{private_key_file, public_key_file}',
  examples: ['boxhub release keygen --out ~/.boxhub'],
  async run(ctx) {
    const { newReleaseKeys } = await import('@boxhub/protocol/release.ts');
    const dir = ctx.values.out ?? '.';
    const priv = join(dir, 'release-key.pem');
    const pub = join(dir, 'release-key.pub.pem');
    if (existsSync(priv) || existsSync(pub))
      throw new UsageError(`${priv} or ${pub} exists already: a new key would orphan every box that holds the old one`);
    const k = newReleaseKeys();
    writeFileSync(priv, k.privateKey, { mode: 0o600, flag: 'wx' });
    writeFileSync(pub, k.publicKey, { flag: 'wx' });
    emit(
      ctx.json,
      { private_key_file: priv, public_key_file: pub },
      `private key: ${priv} (keep it; never on the service or a box)\npublic key:  ${pub} (every box: boxhub agent --release-key)`,
    );
    return EXIT.ok;
  },
});

const sign = defineCommand({
  summary: 'sign a release tarball: writes TARBALL.release.json (manifest and signature)',
  usage: 'TARBALL --key FILE --version V [--platform P] [--entry PATH]',
  description:
    'The tarball is the agent as this repository builds it (npm pack of the CLI with its\ndependencies, or any tarball whose --entry runs `boxhub`). The manifest names its version,\nplatform, size and SHA-256; the signature is Ed25519 over the manifest (docs/updates.md).',
  args: { name: 'TARBALL', min: 1, max: 1 },
  flags: {
    key: { type: 'string', arg: 'FILE', required: true, help: 'the private key (boxhub release keygen)' },
    version: { type: 'string', arg: 'V', required: true, help: "the release's version, e.g. 0.2.0" },
    platform: { type: 'string', arg: 'P', help: 'linux-x64, linux-arm64, … or any (default any: JavaScript only)' },
    entry: {
      type: 'string',
      arg: 'PATH',
      help: 'the file node runs, inside the tarball (default package/bin/boxhub.mjs)',
    },
    json: common.json,
  },
  json: '{manifest, signature, file}',
  examples: ['boxhub release sign boxhub-cli-0.2.0.tgz --key ~/.boxhub/release-key.pem --version 0.2.0'],
  async run(ctx) {
    const { ReleaseManifest, sha256Hex, signManifest } = await import('@boxhub/protocol/release.ts');
    const { parseJson } = await import('@boxhub/protocol');
    const file = ctx.args[0] ?? '';
    const bytes = read(file, 'the tarball');
    const m = parseJson(
      ReleaseManifest,
      JSON.stringify({
        version: ctx.values.version,
        platform: ctx.values.platform ?? 'any',
        size: bytes.length,
        sha256: sha256Hex(bytes),
        entry: ctx.values.entry ?? 'package/bin/boxhub.mjs',
      }),
    );
    if (!m.ok) throw new UsageError(`the manifest is not valid: ${m.error}`);
    let signature: string;
    try {
      signature = signManifest(read(ctx.values.key ?? '', '--key').toString('utf8'), m.value);
    } catch (e) {
      throw new UsageError(`--key: ${messageOf(e)}`);
    }
    const out = `${file}.release.json`;
    writeFileSync(out, `${JSON.stringify({ manifest: m.value, signature }, null, 2)}\n`);
    emit(
      ctx.json,
      { manifest: m.value, signature, file: out },
      `signed ${m.value.version} (${m.value.platform}, ${m.value.size} bytes): ${out}`,
    );
    return EXIT.ok;
  },
});

const upload = defineCommand({
  summary: 'upload a signed release to the service',
  usage: 'TARBALL [--server URL] [--token-file FILE]',
  description:
    'Sends TARBALL with TARBALL.release.json (boxhub release sign) through the operator API\n(POST /api/operator/release/upload). The service checks size and SHA-256; boxes check the signature.',
  args: { name: 'TARBALL', min: 1, max: 1 },
  flags: { ...operatorFlags, json: common.json },
  json: '{id, version, platform, size, sha256, entry, created_at}',
  examples: ['BOXHUB_OPERATOR_TOKEN=… boxhub release upload boxhub-cli-0.2.0.tgz --server https://boxhub.example.org'],
  async run(ctx) {
    const file = ctx.args[0] ?? '';
    const bytes = read(file, 'the tarball');
    let signed: unknown;
    try {
      signed = JSON.parse(read(`${file}.release.json`, 'the signature').toString('utf8'));
    } catch (e) {
      if (e instanceof UsageError) throw e;
      throw new UsageError(`${file}.release.json is not JSON: sign the tarball again`);
    }
    const body = { ...(signed as object), package: bytes.toString('base64') };
    const r = await operatorClient(ctx).post<{ id: string; version: string; platform: string }>(
      '/api/operator/release/upload',
      body,
    );
    emit(ctx.json, r, `release ${r.version} (${r.platform}) uploaded: ${r.id}`);
    return EXIT.ok;
  },
});

const list = defineCommand({
  summary: 'the releases on the service, newest first',
  usage: '[--server URL] [--token-file FILE] [--json]',
  description: 'GET /api/operator/release/list.',
  flags: { ...operatorFlags, json: common.json },
  json: '{releases: [{id, version, platform, size, sha256, entry, created_at}]}',
  examples: ['boxhub release list'],
  async run(ctx) {
    const r = await operatorClient(ctx).get<{
      releases: Array<{ id: string; version: string; platform: string; size: number }>;
    }>('/api/operator/release/list');
    emit(
      ctx.json,
      r,
      r.releases.map((x) => `${x.id}  ${x.version}  ${x.platform}  ${x.size} bytes`).join('\n') || 'no release',
    );
    return EXIT.ok;
  },
});

export const command = defineGroup({
  summary: 'agent releases: signing keys, signing, upload (docs/updates.md)',
  description:
    'Sign agent releases with a key that stays with the operator and upload them; roll them out\nwith `boxhub rollout`.',
  examples: [
    'boxhub release keygen --out ~/.boxhub',
    'boxhub release sign agent.tgz --key ~/.boxhub/release-key.pem --version 0.2.0',
    'boxhub release upload agent.tgz',
  ],
  subcommands: { keygen, sign, upload, list },
});
