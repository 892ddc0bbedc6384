// Feedback cards end to end on a simulated box (docs/cards.md, "Recognition as a service"): the simulated box's
// feeder holds filled cards drawn by the recognizer's synthetic generator (and a blank sheet),
// it scans duplex with blank-page skip and sends the pages by direct transfer to a recognition
// task's address; every student's callback is checked against the truth, in scan order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SimSheet } from '@boxhub/agent/drivers/sim/scanner.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { cardStack, exampleCard } from './card-stack.ts';
import { BoxhubError } from '@boxhub/sdk';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
let rx: Receiver;
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
});
after(async () => {
  await rig.close();
  await rx.close();
});

interface Result {
  uuid: string;
  finish: boolean;
  error_code: number;
  pages: Array<{
    paper_number: number;
    page_number: number;
    front: boolean;
    item_id: number;
    temp_download_url: string;
  }>;
  result: null | { student_id: string; qrcode: string; fills: number[][] };
  detail?: string;
}

test('a box scans a stack of filled cards to a recognition task: one callback per student against the truth, in order, then the end', async () => {
  await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  const stack = await cardStack(4, { seed: 77 });
  // Students 1-2, an empty sheet (both sides skipped as blank), students 3-4: one sheet each.
  const sheets: SimSheet[] = [];
  for (let s = 0; s < 4; s++) {
    if (s === 2) sheets.push({ front: 'blank', back: 'blank' });
    sheets.push({
      front: { image: stack.pages[2 * s]!.jpeg, dpi: 200 },
      back: { image: stack.pages[2 * s + 1]!.jpeg, dpi: 200 },
    });
  }
  const box = await rig.box();
  await rig.load(box, sheets);
  // The SDK's helper: a recognition task, then a scan whose pages go to its address.
  const { task, scan } = await rig.sdk.recognition.scanAndRecognize(box.uuid, `${rx.url}/cards`, {
    direct_page_size: 3,
    duplex: true,
    blank_page_skip: true,
    resolution: 200,
    color_type: 1,
  });

  const at = () => rx.received.filter((r) => r.path.endsWith('/cards'));
  await eventually(() => at().some((r) => r.method === 'PUT'), 'the end callback', 90_000);
  const posts = at()
    .filter((r) => r.method === 'POST')
    .map((r) => JSON.parse(r.body) as Result);
  assert.equal(at().at(-1)!.method, 'PUT');
  assert.deepEqual(JSON.parse(at().at(-1)!.body), { uuid: task.uuid, finish: true });
  assert.equal(posts.length, 4, JSON.stringify(posts.map((p) => [p.error_code, p.detail])));
  // Where each student's sides sit in the stack: the blank sheet (sides 5 and 6) left a gap.
  const sheetOf = [1, 2, 4, 5];
  for (const [i, body] of posts.entries()) {
    const want = stack.expected[i]!;
    assert.equal(body.uuid, task.uuid);
    assert.equal(body.finish, i === 3);
    assert.equal(body.error_code, 0, body.detail);
    const sheet = sheetOf[i]!;
    assert.deepEqual(
      body.pages.map((p) => [p.paper_number, p.page_number, p.front]),
      [
        [sheet, 2 * sheet - 1, true],
        [sheet, 2 * sheet, false],
      ],
    );
    for (const p of body.pages) assert.ok(Number.isInteger(p.item_id) && p.item_id >= 1);
    assert.equal(body.result!.student_id, want.result!.student_id);
    assert.equal(body.result!.qrcode, want.result!.qrcode);
    assert.deepEqual(body.result!.fills, want.result!.fills, `student ${i + 1}`);
  }
  // The scan's item ids are the pages' item ids.
  const ids = new Set<number>();
  for await (const item of rig.sdk.scan.items({ client_uuid: box.uuid, scan_uuid: scan.uuid! })) ids.add(item.item_id);
  for (const b of posts)
    for (const p of b.pages) assert.ok(ids.has(p.item_id), `item ${p.item_id} is one of the scan's items`);
});

test("boxhub card run: the CLI scans the cards and prints each student's result, verified with the callback secret", async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const bin = new URL('../../cli/bin/boxhub.mjs', import.meta.url).pathname;
  const made = await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  const stack = await cardStack(2, { seed: 91 });
  const box = await rig.box();
  await rig.load(
    box,
    [0, 1].map((s) => ({
      front: { image: stack.pages[2 * s]!.jpeg, dpi: 200 },
      back: { image: stack.pages[2 * s + 1]!.jpeg, dpi: 200 },
    })),
  );
  const r = await promisify(execFile)(
    process.execPath,
    [bin, 'card', 'run', '--device', box.uuid, '--template', made.template_id],
    {
      env: {
        ...process.env,
        BOXHUB_URL: rig.t.url,
        BOXHUB_API_KEY: rig.app.api_key,
        BOXHUB_CALLBACK_SECRET: rig.app.callback_secret,
      },
      timeout: 90_000,
    },
  );
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 3, r.stdout + r.stderr);
  for (const [i, want] of stack.expected.entries()) {
    assert.equal(
      lines[i],
      `student ${want.result!.student_id} [pages ${2 * i + 1},${2 * i + 2}]: fills ${JSON.stringify(want.result!.fills)}`,
    );
  }
  assert.match(lines[2]!, /ended: 2 student\(s\), 0 failed/);
});

test("a card template's PDF prints on a box with the print flow (file_url = pdf_url, duplex as the card is)", async () => {
  const made = await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  const box = await rig.box({ printer: 'sim:' });
  const created = await eventually(async () => {
    try {
      return await rig.sdk.print.create({
        client_uuid: box.uuid,
        file_type: 'pdf',
        file_url: made.pdf_url,
        options: { duplex: 'SVC_DP_NOTUMBLE', strict: true },
      });
    } catch (e) {
      if (e instanceof BoxhubError && e.code === 30301) return undefined;
      throw e;
    }
  }, 'print create (once the server knows the printer)');
  const done = await rig.sdk.print.waitForFinish(
    { client_uuid: box.uuid, print_uuid: created.uuid! },
    { intervalMs: 50, timeoutMs: 60_000 },
  );
  assert.equal(done.error_code, 0);
  assert.equal(done.printed_pages, 2, "the card's two sides");
});
