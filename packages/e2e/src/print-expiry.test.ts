// A print task's life ends at expires_at (docs/api.md, "Print task": destroyed automatically
// then): one still queued or printing then ends with 4203 and its print.finished, the
// box drops that task and no other, and the task is destroyed. The server's clock is a
// ManualClock: a day passes in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { expiryRig, HOUR } from './expiry-rig.ts';
import { refusal } from './fixtures.ts';

const x = expiryRig();

async function onePage(): Promise<string> {
  const d = await PDFDocument.create();
  d.addPage([595.28, 841.89]).drawText('worksheet', { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save()).toString('base64');
}

test('a task printing at expires_at ends with 4203 and is destroyed; the box drops it alone and prints the next', async () => {
  const { rig, rx, clock, advance, callback } = x;
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const box = await rig.box({ printer: 'sim:?side_ms=20' });
  box.printer.pauseAfter(0); // the first job holds at the printer until resume()
  const create = async (tag: string) => {
    const r = await rig.sdk.print.create({
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: await onePage(),
      options: { callback_url: `${rx.url}/${tag}` },
    });
    return r.uuid!;
  };
  const first = await create('first');
  await eventually(() => box.printer.jobs.length === 1, 'the first task reached the printer');
  await advance(HOUR);
  const second = await create('second'); // created an hour later: it expires an hour later

  await advance(23 * HOUR + 1000);
  const event = await callback('/first', 'print.finished');
  assert.ok(event.type === 'print.finished', event.type);
  assert.equal(event.body.uuid, first);
  assert.equal(event.body.error_code, 4203);
  await eventually(
    async () => (await refusal(rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: first }))).code === 20404,
    'the first task destroyed',
  );

  // The box cancelled the expired job only; the second prints once the printer goes on.
  await eventually(() => box.printer.jobs[0]?.state === 'canceled', 'the expired job cancelled at the printer');
  box.printer.resume();
  const done = await rig.sdk.print.waitForFinish(
    { client_uuid: box.uuid, print_uuid: second },
    { intervalMs: 50, timeoutMs: 30_000 },
  );
  assert.equal(done.error_code, 0);
  assert.equal(done.pages, 1);
  assert.deepEqual(
    box.printer.jobs.map((j) => [j.task, j.state]),
    [
      [first, 'canceled'],
      [second, 'completed'],
    ],
  );
});
