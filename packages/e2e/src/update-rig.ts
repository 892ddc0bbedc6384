// One box under test for agent updates (docs/updates.md): a test server with the operator API
// on, a registered box run by the real `boxhub launch` and `boxhub agent` (release-rig.ts), and
// what the tests ask of them: releases uploaded, the box's reported state.
import { rmSync } from 'node:fs';
import assert from 'node:assert/strict';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import type { BoxState } from '@boxhub/protocol';
import { releaseKeys, startBox, type Box, type TestRelease } from './release-rig.ts';

export const TOKEN = 'operator-token-for-update-tests-0123456789';

export interface Rig {
  t: TestServer;
  uuid: string;
  secret: string;
  keys: { privateKey: string; publicKey: string };
}

export async function rig(): Promise<Rig> {
  const t = await startTestServer({ env: { BOXHUB_OPERATOR_TOKEN: TOKEN } });
  const d = await t.registerDevice();
  return { t, uuid: d.uuid, secret: d.secret, keys: releaseKeys() };
}

export async function operator<T>(
  t: TestServer,
  path: string,
  body?: unknown,
): Promise<{ code: number; msg: string; data: T }> {
  const res = await fetch(`${t.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as { code: number; msg: string; data: T };
}

export async function upload(t: TestServer, r: TestRelease): Promise<string> {
  const res = await operator<{ id: string }>(t, '/api/operator/release/upload', {
    manifest: r.manifest,
    signature: r.signature,
    package: r.bytes.toString('base64'),
  });
  assert.equal(res.code, 0, res.msg);
  return res.data.id;
}

export async function state(s: Rig): Promise<BoxState | undefined> {
  const d = await s.t.server.repos.devices.findByUuid(s.uuid);
  return d ? parseState(d) : undefined;
}

export const reported = (s: Rig, what: (st: BoxState) => boolean, label: string, ms = 30_000) =>
  eventually(
    async () => {
      const st = await state(s);
      return st && what(st) ? st : undefined;
    },
    label,
    ms,
  );

export async function online(s: Rig, version: string): Promise<void> {
  await reported(s, (st) => st.version === version, `the box online with version ${version}`);
  await eventually(async () => (await s.t.server.repos.devices.findByUuid(s.uuid))?.online === 1, 'the box online');
}

export async function withBox(
  o: { healthTimeoutSec?: number; maxStarts?: number },
  work: (s: Rig, box: Box) => Promise<void>,
): Promise<void> {
  const s = await rig();
  const box = startBox(s.t.mqttUrl, s.uuid, s.secret, s.keys.publicKey, o);
  try {
    await work(s, box);
  } catch (e) {
    process.stderr.write(`box log:\n${box.lines.slice(-40).join('\n')}\n`);
    throw e;
  } finally {
    await box.stop();
    rmSync(box.stateDir, { recursive: true, force: true });
    await s.t.close();
  }
}
