// A continuous scan on a real SANE scanner without a paper sensor (scanimage and SANE's `test`
// backend, which has none): its waitForPaper answers "try" at every poll, and a try with an empty
// feeder feeds nothing. The scan must still end by itself continuous_wait after the last paper
// (docs/printers-and-scanners.md, "For the job runner"), and release the device.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BoxAgent, SimPrinter } from '@boxhub/agent';
import { SaneScannerDriver } from '@boxhub/agent/drivers/sane/scanner-driver.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { saneTestConfig, type SaneTestConfig } from '../../agent/test/sane.ts';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { startRig, type Rig, peerBox } from './fixtures.ts';

let rig: Rig;
let sane: SaneTestConfig;
let agent: BoxAgent | undefined;
before(async () => {
  rig = await startRig();
  sane = saneTestConfig();
});
after(async () => {
  await agent?.stop();
  await rig?.close();
  sane?.close();
});

test('continuous_wait > 0 on a SANE scanner without a paper sensor: the scan ends by itself after the wait', async () => {
  // The feeder holds two sheets on the first run of scanimage and is empty (SANE_STATUS_NO_DOCS)
  // on every later one: the real scanimage both times, counted in a file.
  const runs = join(sane.dir, 'runs');
  const bin = join(sane.dir, 'two-then-empty');
  writeFileSync(
    bin,
    [
      '#!/bin/sh',
      'case "$*" in *--batch-print*) ;; *) exec scanimage "$@" ;; esac',
      `echo run >> "${runs}"`,
      `if [ "$(wc -l < "${runs}")" -eq 1 ]; then exec scanimage "$@" --batch-count=2; fi`,
      'exec scanimage "$@" --read-return-value SANE_STATUS_NO_DOCS',
    ].join('\n'),
    { mode: 0o755 },
  );
  const agentLog: string[] = [];
  const d = await rig.t.registerDevice();
  await rig.sdk.devices.bind({ uuid: d.uuid, name: 'sane box' });
  agent = peerBox({
    link: { url: rig.t.mqttUrl, uuid: d.uuid, secret: d.secret, keepaliveSec: 30 },
    printer: new SimPrinter('sim:'),
    scanner: new SaneScannerDriver('sane:test', {
      env: sane.env,
      bin,
      tmpDir: tempDirUntilExit('boxhub-sane-pages-'),
      paperPollMs: 100,
    }),
    // The agent's account of the loop is the failure's detail (a run that never ends says why).
    log: (msg, extra) => {
      agentLog.push(`${msg} ${JSON.stringify(extra ?? {})}`);
    },
  });
  await agent.start();
  await eventually(
    async () => (await rig.sdk.devices.info({ uuid: d.uuid })).client?.scanner?.connected === true,
    'the SANE scanner is connected',
  );

  const uuid = (
    await rig.sdk.scan.create({
      client_uuid: d.uuid,
      options: {
        continuous: true,
        continuous_wait: 1,
        duplex: false,
        resolution: 100,
        blank_page_skip: false,
        item_seconds: 0,
      },
    })
  ).uuid!;
  // Before the fix every empty try restarted the wait: the task never finished and this timed out.
  const done = await rig.sdk.scan
    .waitForFinish({ client_uuid: d.uuid, scan_uuid: uuid }, { intervalMs: 100, timeoutMs: 60_000 })
    .catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; the agent said:\n${agentLog.slice(-40).join('\n')}`);
    });
  assert.equal(done.error_code, 0);
  assert.equal(done.total_pages, 2, 'the two sheets of the first run');
  assert.equal(done.item_size, 1);
  const tries = readFileSync(runs, 'utf8').trim().split('\n').length;
  assert.ok(tries >= 2, `it tried the empty feeder (${tries} runs of scanimage)`);
  assert.deepEqual(await rig.sdk.scan.current({ client_uuid: d.uuid }), { exist: false }, 'the device is released');
});
