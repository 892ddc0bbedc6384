// Durability (issue: "a server killed with SIGKILL at any point resumes every pending delivery
// on restart at its due time"): a real server process on a fixed data dir is killed between
// two attempts of one callback and in the middle of an attempt of another, then started again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { ApiClient, engine, eventually } from '../../testing/harness.ts';
import { startReceiver } from '../../testing/receiver.ts';

const TIMEOUT = 800;
// Retry 2 is due long enough after the kill for a restart on a busy machine (tsx start ~5 s).
const DELAYS = [1000, 8000, 2000];
const SLACK = 600;
const root = new URL('../../../../../', import.meta.url).pathname;

interface Node { child: ChildProcess; url: string; app: { id: string; api_key: string } }

function startNode(env: Record<string, string>): Promise<Node> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/testing/callback-node.ts'], {
    cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (l) => {
      const m = JSON.parse(l) as { url: string; app: { id: string; api_key: string } };
      resolve({ child, url: m.url, app: m.app });
    });
    child.once('exit', (code) => reject(new Error(`server process exited with ${code} before it was ready`)));
  });
}

function kill9(n: Node): Promise<void> {
  return new Promise((resolve) => { n.child.once('exit', () => resolve()); n.child.kill('SIGKILL'); });
}

test('SIGKILL between and during attempts: every remaining attempt arrives at its due time after restart', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-crash-'));
  const pgSchema = engine === 'external' ? `t_crash_${randomBytes(5).toString('hex')}` : undefined;
  const failing = await startReceiver();
  const hanging = await startReceiver();
  failing.answer(500);
  hanging.decide((_r, n) => (n === 1 ? 'silent' : 200));
  const env: Record<string, string> = {
    PORT: '0', HOST: '127.0.0.1', BOXHUB_MQTT_PORT: '0', BOXHUB_DATA_DIR: dataDir, LOG_LEVEL: 'silent',
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_TEST_APP_FILE: join(dataDir, 'app.json'),
    BOXHUB_CALLBACK_TIMEOUT_MS: String(TIMEOUT), BOXHUB_CALLBACK_RETRY_DELAYS_MS: DELAYS.join(','),
    BOXHUB_CALLBACK_CLAIM_MARGIN_MS: '500', BOXHUB_CALLBACK_POLL_MS: '1000',
    ...(pgSchema ? { DATABASE_URL: process.env.BOXHUB_TEST_DATABASE_URL!, BOXHUB_TEST_PG_SCHEMA: pgSchema } : {}),
  };
  let node: Node | undefined;
  try {
    node = await startNode(env);
    const api = () => new ApiClient(node!.url, node!.app.api_key);
    const attemptsOf = async (id: string) => {
      const r = await api().get<{ callbacks: { id: string; status: string; attempts: unknown[] }[] }>('/api/application/callback/list', { page: 1 });
      return r.data.callbacks.find((c) => c.id === id);
    };
    const a = (await api().post<{ id: string }>('/api/application/callback/test', { callback_url: failing.url })).data.id;
    // Attempt 2 failed and is recorded: the row now waits for its retry in the database.
    await eventually(async () => (await attemptsOf(a))?.attempts.length === 2, 'two recorded attempts', 10_000);
    const b = (await api().post<{ id: string }>('/api/application/callback/test', { callback_url: hanging.url })).data.id;
    await eventually(() => hanging.byId(b).length === 1, 'attempt of b in flight');
    const killedAt = Date.now();
    await kill9(node);
    node = undefined;

    node = await startNode(env);
    const restartedAt = Date.now();

    await eventually(() => failing.byId(a).length === 4, 'attempts 3 and 4 of a', 15_000);
    const rs = failing.byId(a);
    // Due at failure + delay; when the restart itself ended later than that (a slow start on a
    // loaded machine), the overdue attempt must come as soon as the server is up.
    for (let i = 1; i < 4; i++) {
      const due = rs[i - 1]!.answeredAt! + DELAYS[i - 1]!;
      const expected = i === 2 ? Math.max(due, restartedAt) : due;
      assert.ok(rs[i]!.at >= due - 5, `retry ${i} not early: ${rs[i]!.at - due} ms`);
      assert.ok(rs[i]!.at <= expected + SLACK, `retry ${i} came ${rs[i]!.at - expected} ms late (restart took ${restartedAt - killedAt} ms)`);
    }
    const cbA = await eventually(async () => { const c = await attemptsOf(a); return c?.status === 'failed' ? c : undefined; }, 'a failed');
    assert.equal(cbA.attempts.length, 4, 'nothing lost, nothing repeated');
    assert.equal(failing.received.length, 4);

    // b was in flight when the process died: its claim lapses (timeout + margin) and it is sent again.
    await eventually(() => hanging.byId(b).length === 2, 'b resent after its claim lapsed', 10_000);
    const [first, second] = hanging.byId(b);
    const lapse = first!.at + TIMEOUT + 500;
    assert.ok(second!.at >= lapse - 5, 'not before the claim lapsed');
    assert.ok(second!.at <= Math.max(lapse, restartedAt) + 1000, `b resent ${second!.at - Math.max(lapse, restartedAt)} ms after it became due again`);
    const cbB = await eventually(async () => { const c = await attemptsOf(b); return c?.status === 'delivered' ? c : undefined; }, 'b delivered');
    assert.equal(hanging.byId(b)[1]!.headers['x-svc-callback-id'], b, 'same id, so the receiver can de-duplicate');
    assert.equal(cbB.attempts.length, 1, 'the attempt cut by the crash left no record; the resend did');
  } finally {
    const child = node?.child;
    if (child && child.exitCode === null) await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); });
    await failing.close(); await hanging.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
