// Feedback cards on two server nodes (docs/architecture.md, "Scaling out": the same flow with two
// server nodes on PostgreSQL and the external broker): one database, one bucket (s3rver), one broker;
// the application talks to both nodes, the box's pages arrive at one, and the recognition jobs
// are claimed from the shared jobs table by either. Runs in the scale-out test pass only.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SimSheet } from '@boxhub/agent/drivers/sim/scanner.ts';
import { BoxhubError } from '@boxhub/sdk';
import { engine, eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startS3, type TestS3 } from '@boxhub/server/testing/s3rver.ts';
import { createSimulatedBox, type SimulatedBox } from '@boxhub/agent';
import { cardStack, exampleCard } from './card-stack.ts';
import { rigSdk } from './fixtures.ts';

// Defined in the scale-out pass only (it needs PostgreSQL and the external broker).
const external = engine === 'external';
let s3: TestS3 | undefined;
let a: TestServer | undefined;
let b: TestServer | undefined;
let rx: Receiver | undefined;
let box: SimulatedBox | undefined;

before(async () => {
  if (!external) return;
  s3 = await startS3();
  rx = await startReceiver();
  const env = {
    ...s3.env,
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    BOXHUB_SECRET_KEY: randomBytes(32).toString('base64'),
    BOXHUB_MQTT_SHARE_GROUP: `t${randomBytes(6).toString('hex')}`,
  };
  a = await startTestServer({ env });
  // Both nodes hand out addresses on one public URL (a load balancer's; here node A's).
  b = await startTestServer({
    env: { ...env, BOXHUB_PUBLIC_URL: a.url },
    reuse: { dataDir: mkdtempSync(join(tmpdir(), 'boxhub-node-b-')), pgSchema: a.pgSchema },
  });
});
after(async () => {
  await box?.agent.stop();
  await b?.close();
  await a?.close();
  await rx?.close();
  await s3?.close();
});

if (external)
  test('two nodes: templates on one, the task on the other, pages recognized from the shared jobs table, every student in order', async () => {
    const app = await a!.createApp('cards', { ess: true });
    const onA = rigSdk(a!.url, app.api_key);
    const onB = rigSdk(b!.url, app.api_key);
    await onB.recognition.createTemplate({ definition: { ...exampleCard } });
    const task = await onA.recognition.create({ callback_url: `${rx!.url}/nodes` });

    const d = await a!.registerDevice();
    await onA.devices.bind({ uuid: d.uuid, name: 'box' });
    box = createSimulatedBox({
      url: a!.mqttUrl,
      uuid: d.uuid,
      secret: d.secret,
      keepaliveSec: 30,
      rebootMs: 200,
      backoff: { baseMs: 50, maxMs: 500 },
      uploadBackoff: { baseMs: 50, maxMs: 500 },
      outboxResendMs: 1000,
    });
    await box.agent.start();
    await eventually(async () => (await onB.devices.info({ uuid: d.uuid })).client?.online === true, 'the box online');
    const stack = await cardStack(4, { seed: 123 });
    const sheets: SimSheet[] = [0, 1, 2, 3].map((s) => ({
      front: { image: stack.pages[2 * s]!.jpeg, dpi: 200 },
      back: { image: stack.pages[2 * s + 1]!.jpeg, dpi: 200 },
    }));
    box.scanner.load(sheets);
    const scan = await eventually(async () => {
      try {
        return await onB.scan.create({
          client_uuid: d.uuid,
          options: { direct_mode: 1, direct_addr: task.direct_addr, direct_page_size: 2, color_type: 1 },
        });
      } catch (e) {
        if (e instanceof BoxhubError && e.kind === 'api') return undefined; // e.g. 30203 until it sees the paper
        throw e;
      }
    }, 'scan create on node B (once it sees paper in the feeder)');
    assert.ok(scan.uuid);

    const at = () => rx!.received.filter((r) => r.path.endsWith('/nodes'));
    await eventually(() => at().some((r) => r.method === 'PUT'), 'the end callback', 90_000);
    const posts = at()
      .filter((r) => r.method === 'POST')
      .map(
        (r) =>
          JSON.parse(r.body) as {
            finish: boolean;
            error_code: number;
            detail?: string;
            result: { student_id: string; fills: number[][] } | null;
          },
      );
    assert.equal(posts.length, 4);
    for (const [i, p] of posts.entries()) {
      assert.equal(p.error_code, 0, p.detail);
      assert.equal(p.finish, i === 3);
      assert.equal(p.result!.student_id, stack.expected[i]!.result!.student_id);
      assert.deepEqual(p.result!.fills, stack.expected[i]!.result!.fills);
    }
  });
