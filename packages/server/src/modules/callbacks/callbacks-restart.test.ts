// Durability (issue: "a server killed with SIGKILL at any point resumes every pending delivery
// on restart at its due time"): a real server process on a fixed data dir is killed between
// two attempts of one callback and in the middle of an attempt of another, then started again.
// The process runs on a ManualClock moved over stdin (testing/callback-node.ts), and the new
// process starts where the test says time has got to, so every time below is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface, type Interface } from 'node:readline';
import { ApiClient, engine, eventually } from '../../testing/harness.ts';
import { startReceiver } from '../../testing/receiver.ts';

const TIMEOUT = 5000;
const MARGIN = 10_000;
const DELAYS = [8000, 13000, 21000];
const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const root = new URL('../../../../../', import.meta.url).pathname;

interface Node {
  child: ChildProcess;
  url: string;
  app: { id: string; api_key: string };
  lines: Interface;
  advance(ms: number): Promise<number>;
}

function startNode(env: Record<string, string>, clockAt: number): Promise<Node> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/testing/callback-node.ts'], {
    cwd: root,
    env: { ...process.env, ...env, BOXHUB_TEST_CLOCK: String(clockAt) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve) =>
      lines.once('line', (l) => resolve(JSON.parse(l) as Record<string, unknown>)),
    );
  return new Promise((resolve, reject) => {
    void next().then((m) =>
      resolve({
        child,
        lines,
        url: m.url as string,
        app: m.app as Node['app'],
        async advance(ms) {
          const answer = next();
          child.stdin!.write(`advance ${ms}\n`);
          return (await answer).now as number;
        },
      }),
    );
    child.once('exit', (code) => reject(new Error(`server process exited with ${code} before it was ready`)));
  });
}

function kill9(n: Node): Promise<void> {
  return new Promise((resolve) => {
    n.child.once('exit', () => resolve());
    n.child.kill('SIGKILL');
  });
}

type Cb = { id: string; status: string; attempts: { at: number; status_code?: number; error?: string }[] };

test('SIGKILL between and during attempts: every remaining attempt is made at its due time after restart, once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-crash-'));
  const pgSchema = engine === 'external' ? `t_crash_${randomBytes(5).toString('hex')}` : undefined;
  const failing = await startReceiver();
  const hanging = await startReceiver();
  failing.answer(500);
  hanging.decide((_r, n) => (n === 1 ? 'silent' : 200));
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    BOXHUB_MQTT_PORT: '0',
    BOXHUB_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    BOXHUB_TEST_APP_FILE: join(dataDir, 'app.json'),
    BOXHUB_CALLBACK_TIMEOUT_MS: String(TIMEOUT),
    BOXHUB_CALLBACK_RETRY_DELAYS_MS: DELAYS.join(','),
    BOXHUB_CALLBACK_CLAIM_MARGIN_MS: String(MARGIN),
    ...(pgSchema ? { DATABASE_URL: process.env.BOXHUB_TEST_DATABASE_URL!, BOXHUB_TEST_PG_SCHEMA: pgSchema } : {}),
  };
  let node: Node | undefined;
  try {
    node = await startNode(env, START);
    const api = () => new ApiClient(node!.url, node!.app.api_key);
    const get = async (id: string) =>
      (await api().get<{ callbacks: Cb[] }>('/api/application/callback/list', { page: 1 })).data.callbacks.find(
        (c) => c.id === id,
      );
    const recorded = (id: string, n: number) =>
      eventually(async () => {
        const c = await get(id);
        return c && c.attempts.length >= n ? c : undefined;
      }, `${n} attempts of ${id}`);

    const a = (await api().post<{ id: string }>('/api/application/callback/test', { callback_url: failing.url })).data
      .id;
    await recorded(a, 1);
    assert.equal(await node.advance(DELAYS[0]!), START + DELAYS[0]!);
    await recorded(a, 2);
    // Attempt 2 failed and is recorded: a waits for its retry at START + 8 s + 13 s in the database.
    const b = (await api().post<{ id: string }>('/api/application/callback/test', { callback_url: hanging.url })).data
      .id;
    await eventually(() => hanging.byId(b).length === 1, 'attempt of b in flight');
    // b's claim lasts until START + 8 s + timeout + margin.
    await kill9(node);
    node = undefined;

    // Down for 14 s: a's retry (due at START + 21 s) is overdue when the server comes back.
    const back = START + DELAYS[0]! + 14_000;
    node = await startNode(env, back);
    const cbA3 = await recorded(a, 3);
    assert.equal(cbA3.attempts[2]!.at, back, 'the overdue retry is made as soon as the server is up');
    const bLapse = START + DELAYS[0]! + TIMEOUT + MARGIN;
    await node.advance(bLapse - 1 - back);
    assert.equal(hanging.byId(b).length, 1, 'b is not resent while its claim lasts');
    await node.advance(1);
    const cbB = await eventually(async () => {
      const c = await get(b);
      return c?.status === 'delivered' ? c : undefined;
    }, 'b delivered');
    assert.equal(cbB.attempts.length, 1, 'the attempt cut by the crash left no record; the resend did');
    assert.equal(cbB.attempts[0]!.at, bLapse, 'b is resent the moment its claim lapses');
    assert.equal(hanging.byId(b).length, 2);
    assert.equal(hanging.byId(b)[1]!.headers['x-svc-callback-id'], b, 'same id, so the receiver can de-duplicate');

    await node.advance(back + DELAYS[2]! - bLapse);
    const cbA = await eventually(async () => {
      const c = await get(a);
      return c?.status === 'failed' ? c : undefined;
    }, 'a failed');
    assert.deepEqual(
      cbA.attempts.map((x) => x.at),
      [START, START + DELAYS[0]!, back, back + DELAYS[2]!],
      'every attempt at its due time',
    );
    assert.equal(failing.received.length, 4, 'nothing lost, nothing repeated');
  } finally {
    const child = node?.child;
    if (child && child.exitCode === null)
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    await failing.close();
    await hanging.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
