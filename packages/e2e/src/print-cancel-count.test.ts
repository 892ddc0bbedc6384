// A cancelled strict-mode print's print.finished waits for the printer's count of printed sides
// (docs/printing.md, "Cancel"), but not for ever: a box that does not report it (here: gone
// offline while printing) gets the callback BOXHUB_PRINT_COUNT_WAIT_MS (60 s) after the cancel,
// without printed_pages. The server's clock is a ManualClock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { expiryRig } from './expiry-rig.ts';

// A long command timeout: the server's clock stands still while a loaded machine works on a
// create, and the box checks each command's expires_at against its own clock.
const x = expiryRig({ commandTimeoutMs: 60_000 });

test('a box that never reports the count: print.finished without printed_pages after the wait, once', async () => {
  const { rig, rx, clock, advance, callback } = x;
  await clock.catchUp();
  const box = await rig.box({ printer: 'sim:?side_ms=10' });
  box.printer.pauseAfter(1);
  const d = await PDFDocument.create();
  for (let i = 0; i < 3; i++) d.addPage([595.28, 841.89]);
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const uuid = (
    await rig.sdk.print.create({
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: Buffer.from(await d.save()).toString('base64'),
      options: { strict: true, callback_url: `${rx.url}/count` },
    })
  ).uuid!;
  await eventually(
    async () => (await rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: uuid })).started,
    'printing',
  );
  await box.agent.stop();
  await rig.online(box.uuid, false);
  await clock.catchUp();
  await rig.sdk.print.cancel({ client_uuid: box.uuid });
  const info = await rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: uuid });
  assert.deepEqual([info.finished, info.error_code], [true, 4201], 'ended at once');
  await advance(30_000);
  assert.equal(
    rx.received.filter((r) => r.path.endsWith('/count') && JSON.parse(r.body).event === 'print.finished').length,
    0,
    'still waiting for the count',
  );
  await advance(30_000);
  const e = await callback('/count', 'print.finished');
  assert.ok(e.type === 'print.finished');
  assert.deepEqual([e.body.uuid, e.body.error_code, e.body.printed_pages], [uuid, 4201, undefined]);
  await advance(60_000);
  assert.equal(
    rx.received.filter((r) => r.path.endsWith('/count') && JSON.parse(r.body).event === 'print.finished').length,
    1,
    'one print.finished',
  );
});
