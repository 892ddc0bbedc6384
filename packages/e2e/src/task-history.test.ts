// Every task's history (docs/tasks.md, "History"): the append-only timeline of a print and a
// scan task, what happened and who said so, read through the SDK; it expires with its task. A
// real server on a ManualClock (a day passes in one line), the real broker and simulated boxes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import type { TaskHistoryEntry } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { expiryRig, HOUR } from './expiry-rig.ts';
import { refusal, rigSdk } from './fixtures.ts';

// A long command timeout: the server's clock stands still while a loaded machine works on a
// create, and the box checks each command's expires_at against its own clock.
const x = expiryRig({ commandTimeoutMs: 60_000 });

async function pdf(pages: number): Promise<string> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([595.28, 841.89]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save()).toString('base64');
}

const whats = (l: TaskHistoryEntry[]) => l.map((e) => `${e.source}:${e.what}`);
/** `sub` appears in `l` in this order (other entries may come between). */
function inOrder(l: string[], sub: string[]): boolean {
  let i = 0;
  for (const s of l) if (s === sub[i]) i++;
  return i === sub.length;
}

test("a print that the printer stops: created, sent, acknowledged, downloaded, accepted, pages, the printer's state, finished; then it expires", async () => {
  const { rig, clock, advance } = x;
  await clock.catchUp();
  // The job stops after two of its three sides with a paper jam.
  const box = await rig.box({ printer: 'sim:?side_ms=20&fail_after=2&fail=media-jam' });
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const uuid = (
    await rig.sdk.print.create({
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: await pdf(3),
      options: { strict: true },
    })
  ).uuid!;
  const done = await rig.sdk.print.waitForFinish(
    { client_uuid: box.uuid, print_uuid: uuid },
    { intervalMs: 50, timeoutMs: 30_000 },
  );
  assert.equal(done.error_code, 4304);
  // The printer's own state while it printed reaches the history with the box's next state report.
  const h = await eventually(async () => {
    const r = await rig.sdk.tasks.history({ uuid });
    return r.entries.some(
      (e) => e.what === 'printer_state' && (e.detail?.state_reasons as string[] | undefined)?.includes('media_jam'),
    )
      ? r
      : undefined;
  }, 'the jam in the history');
  assert.deepEqual([h.uuid, h.kind, h.client_uuid], [uuid, 'print', box.uuid]);
  const l = whats(h.entries);
  assert.ok(
    inOrder(l, [
      'server:created',
      'server:sent',
      'box:acknowledged',
      'box:downloaded',
      'printer:accepted',
      'printer:pages_done',
      'printer:finished',
    ]),
    l.join(' '),
  );
  const at = h.entries.map((e) => e.at);
  assert.deepEqual(
    at,
    [...at].sort((a, b) => a - b),
    'oldest first',
  );
  const get = (what: string) => h.entries.filter((e) => e.what === what);
  assert.equal(get('accepted')[0]!.detail?.pages, 3);
  const counts = get('pages_done').map((e) => Number(e.detail?.pages));
  // At most one a second (the box's print.progress), so here the first count at least.
  assert.ok(
    counts.length >= 1 && counts.every((n, i) => n >= 1 && n <= 2 && (i === 0 || n > counts[i - 1]!)),
    `sides done as the printer counted them: ${counts.join()}`,
  );
  assert.deepEqual(get('finished')[0]!.detail, {
    outcome: 'failed',
    error_code: 4304,
    printed_pages: 2,
    message: get('finished')[0]!.detail?.message,
  });
  const jam = get('printer_state').find((e) => ((e.detail?.state_reasons ?? []) as string[]).includes('media_jam'))!;
  assert.deepEqual(
    [jam.source, jam.detail?.error_code, jam.detail?.device_reasons],
    ['printer', 4, ['media-jam-error']],
  );
  assert.equal(get('created').length, 1, 'each happening once');

  // Only the application's own tasks.
  const other = await rig.t.createApp('other');
  assert.equal((await refusal(rigSdk(rig.t.url, other.api_key).tasks.history({ uuid }))).code, 20404);
  // It expires with its task.
  await advance(24 * HOUR + 1000);
  await eventually(
    async () => (await refusal(rig.sdk.tasks.history({ uuid }))).code === 20404,
    'the history destroyed with the task',
  );
  const rows = await rig.t.server.db.kysely
    .selectFrom('task_history')
    .select('id')
    .where('task_uuid', '=', uuid)
    .execute();
  assert.equal(rows.length, 0, 'no row left behind');
});

test("a cancelled print: the server's cancel, then the box's report of what the printer did", async () => {
  const { rig, clock } = x;
  await clock.catchUp();
  const box = await rig.box({ printer: 'sim:?side_ms=10' });
  box.printer.pauseAfter(1);
  await clock.catchUp(); // the box checks each command's expires_at against its own clock
  const uuid = (
    await rig.sdk.print.create({
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: await pdf(4),
      options: { strict: true },
    })
  ).uuid!;
  await eventually(() => (box.printer.jobs[0]?.impressions ?? 0) >= 1, 'printing');
  await eventually(
    async () => (await rig.sdk.print.info({ client_uuid: box.uuid, print_uuid: uuid })).started,
    'the server knows it is printing',
  );
  await clock.catchUp();
  await rig.sdk.print.cancel({ client_uuid: box.uuid });
  const h = await eventually(async () => {
    const r = await rig.sdk.tasks.history({ uuid });
    return r.entries.some((e) => e.what === 'finished') ? r : undefined;
  }, "the box's end");
  const l = whats(h.entries);
  assert.ok(
    inOrder(l, [
      'server:created',
      'server:sent',
      'box:acknowledged',
      'printer:accepted',
      'server:cancelled',
      'printer:finished',
    ]),
    l.join(' '),
  );
  assert.deepEqual(h.entries.find((e) => e.what === 'cancelled')!.detail, { error_code: 4201 });
  assert.equal(h.entries.find((e) => e.what === 'finished')!.detail?.printed_pages, 1);
});

test('a scan: created, sent, acknowledged, each item stored, finished; a stopped scan says who stopped it', async () => {
  const { rig, clock } = x;
  await clock.catchUp();
  const box = await rig.box();
  await rig.load(box, 2);
  await clock.catchUp();
  // item_seconds 0: one item however slowly a loaded machine scans the two sheets.
  const uuid = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { duplex: false, item_seconds: 0 } }))
    .uuid!;
  await rig.sdk.scan.waitForFinish({ client_uuid: box.uuid, scan_uuid: uuid }, { intervalMs: 50, timeoutMs: 30_000 });
  const h = await rig.sdk.tasks.history({ uuid });
  assert.equal(h.kind, 'scan');
  const l = whats(h.entries);
  assert.ok(
    inOrder(l, ['server:created', 'server:sent', 'box:acknowledged', 'box:item_stored', 'box:finished']),
    l.join(' '),
  );
  assert.deepEqual(h.entries.find((e) => e.what === 'finished')!.detail, { error_code: 0, items: 1, pages: 2 });

  const other = await rig.box(); // a box of its own: the first one winds its scan down
  await clock.catchUp();
  const waiting = (
    await rig.sdk.scan.create({ client_uuid: other.uuid, options: { continuous: true, continuous_wait: 0 } })
  ).uuid!;
  await eventually(
    async () => (await rig.sdk.scan.info({ client_uuid: other.uuid, scan_uuid: waiting })).action_ack,
    'the box took it',
  );
  await clock.catchUp();
  await rig.sdk.scan.stop({ client_uuid: other.uuid });
  // The application's stop (through the server), then the end: the box's report when it answered
  // first, the server's own when it did not.
  const s = await eventually(async () => {
    const r = await rig.sdk.tasks.history({ uuid: waiting });
    return r.entries.some((e) => e.what === 'stopped' || e.what === 'finished') ? r : undefined;
  }, 'stopped');
  const sl = whats(s.entries);
  assert.ok(inOrder(sl, ['server:created', 'server:sent', 'box:acknowledged', 'server:stop_requested']), sl.join(' '));
  assert.ok(sl.includes('box:finished') || sl.includes('server:stopped'), sl.join(' '));
});
