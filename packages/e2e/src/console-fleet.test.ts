// The operator's fleet and rollout pages (docs/console.md "Fleet") in a real browser: Debian's
// chromium driven by puppeteer-core against a real server with a simulated box online and
// boxes registered in bulk with labels.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Page } from 'puppeteer-core';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { ConsoleBrowser } from './console-browser.ts';
import { startRig, type Rig, type RigBox } from './fixtures.ts';
import { entries, makeRelease, releaseKeys } from './release-rig.ts';

const OPERATOR_TOKEN = `op-${randomBytes(16).toString('hex')}`;

let rig: Rig;
let box: RigBox;
let c: ConsoleBrowser;
let page: Page;

async function operator<T>(path: string, body?: unknown): Promise<{ code: number; msg: string; data: T }> {
  const res = await fetch(`${rig.t.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as { code: number; msg: string; data: T };
}

before(async () => {
  rig = await startRig({ env: { BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN } });
  box = await rig.box();
  const code = (await rig.sdk.devices.info({ uuid: box.uuid })).client?.code ?? '';
  // The online box gets its labels by a bulk import that lists it again (it exists: labels only).
  const reg = await operator<{ devices: Array<{ status: string }> }>('/api/operator/device/bulk_register', {
    devices: [
      { code, model: 'BX-SIM', labels: ['school=north'] },
      { code: `F1-${randomBytes(3).toString('hex')}`, model: 'BX-1', labels: ['school=north'] },
      { code: `F2-${randomBytes(3).toString('hex')}`, model: 'BX-1', labels: ['school=south'] },
    ],
  });
  assert.deepEqual(
    reg.data.devices.map((d) => d.status),
    ['exists', 'registered', 'registered'],
  );
  const r = makeRelease('0.9.0', entries.crash, releaseKeys().privateKey);
  assert.equal(
    (
      await operator('/api/operator/release/upload', {
        manifest: r.manifest,
        signature: r.signature,
        package: r.bytes.toString('base64'),
      })
    ).code,
    0,
  );
  c = await ConsoleBrowser.open(rig.t.url);
  page = c.page;
});

after(async () => {
  await c?.close();
  await rig?.close();
});

test("the fleet page: boxes by state, version and label; a label narrows it; a box's history", async () => {
  // Not signed in: the fleet is the operator's only.
  await page.goto(c.url('/console/operator/fleet'));
  await page.waitForSelector('#operator_token');
  await page.type('#operator_token', OPERATOR_TOKEN);
  await c.go('button[type=submit]');
  await page.goto(c.url('/console/operator/fleet'));
  assert.equal(await c.text('#fleet-total'), '3');
  assert.equal(await c.text('#fleet-online'), '1');
  assert.equal(await c.text('#fleet-offline'), '2');
  // The simulated box runs 1.0.0; the two boxes that never connected have reported none.
  assert.match(await c.text('#fleet-versions tr.version[data-version="1.0.0"]'), /1\.0\.0\s*1/);
  assert.match(await c.text('#fleet-versions tr.version[data-version="unknown"]'), /unknown\s*2/);
  assert.match(await c.text('#fleet-labels tr.label[data-label="school=north"]'), /school=north\s*2\s*1/);
  await c.go('#fleet-labels tr.label[data-label="school=south"] a');
  assert.equal(await c.text('#fleet-label'), 'school=south');
  assert.equal(await c.text('#fleet-total'), '1');
  assert.equal((await page.$$('#fleet-boxes tr.box')).length, 1);
  await page.goto(c.url('/console/operator/fleet'));
  await c.go(`#fleet-boxes tr.box[data-uuid="${box.uuid}"] a`);
  assert.match(await c.text('#box-history'), /connect/);
  // The same figures on /metrics.
  const metrics = await (await fetch(c.url('/metrics'))).text();
  for (const line of [
    'boxhub_fleet_boxes{state="online"} 1',
    'boxhub_fleet_boxes{state="offline"} 2',
    'boxhub_fleet_boxes_by_version{version="1.0.0"} 1',
    'boxhub_fleet_boxes_by_label{label="school=north",online="true"} 1',
    'boxhub_fleet_boxes_by_label{label="school=south",online="false"} 1',
  ]) {
    assert.ok(metrics.split('\n').includes(line), `/metrics has ${line}`);
  }
  // The box goes away: offline since when, and a disconnect in its history.
  await box.agent.stop();
  await eventually(
    async () => (await rig.t.server.repos.devices.findByUuid(box.uuid))?.online === 0,
    'the box offline',
  );
  // The history entry is written by the presence listener, after the device row.
  await eventually(
    async () =>
      (
        await rig.t.server.db.kysely
          .selectFrom('device_history')
          .select('id')
          .where('device_uuid', '=', box.uuid)
          .where('what', '=', 'disconnect')
          .execute()
      ).length > 0,
    'the disconnect in its history',
  );
  await page.reload();
  assert.match(await c.text('#box-history tr.entry.disconnect'), /disconnect/);
  await page.goto(c.url('/console/operator/fleet'));
  assert.match(await c.text(`#fleet-boxes tr.box[data-uuid="${box.uuid}"]`), /offline since \d{4}-\d\d-\d\d/);
});

test('the rollout pages: start a rollout by label, see it wave by wave, cancel it', async () => {
  await page.goto(c.url('/console/operator/rollouts'));
  await page.select('#rollout-label', 'school=north');
  await page.$eval('#rollout-waves', (e) => {
    (e as unknown as { value: string }).value = '2';
  });
  await c.go('#create-rollout');
  assert.match(page.url(), /\/console\/operator\/rollouts\/[0-9a-f-]{36}$/);
  assert.equal(await c.text('#rollout-state'), 'running');
  // Both boxes with the label are offline: each wave waits for its box, pending.
  const waves = await page.$$eval('#rollout-waves tr.wave', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '').join(' ')),
  );
  assert.deepEqual(waves, ['1 1 0 0 0 1', '2 1 0 0 0 1']);
  const id = page.url().split('/').pop() ?? '';
  const metrics = await (await fetch(c.url('/metrics'))).text();
  assert.ok(
    metrics.includes(
      `boxhub_rollout_boxes{rollout="${id}",version="0.9.0",rollout_state="running",wave="2",state="pending"} 1`,
    ),
    'the rollout on /metrics',
  );
  await c.go('#cancel-rollout');
  assert.equal(await c.text('#rollout-state'), 'canceled');
  await page.goto(c.url('/console/operator/rollouts'));
  assert.match(await c.text('#rollouts tr.rollout .state'), /canceled/);
  assert.match(await c.text('#releases'), /0\.9\.0/);
});
