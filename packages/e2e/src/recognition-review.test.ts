// The teacher's review loop over the API and the SDK (docs/cards.md, "The review loop"): the
// students that need review, each page's overlay and annotated image, corrections recorded in
// the audit trail and delivered as signed revision callbacks (never a second end callback),
// another application answered as for a missing id, and corrections kept over a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { CallbackReceiver, type Boxhub, type RecognitionTask } from '@boxhub/sdk';
import { endManifest, pagesManifest, sendDirect } from './direct-sender.ts';
import { exampleCard } from './card-stack.ts';
import { refusal, rigSdk, startRig, type Rig, type RigBox } from './fixtures.ts';
import { reviewStack, type ReviewStack } from './review-stack.ts';

let rig: Rig;
let rx: Receiver;
let stack: ReviewStack;
let task: RecognitionTask;
let other: Boxhub;
let box: RigBox;
/** The server after a restart (the rig's server is closed, keeping its data). */
let restarted: TestServer | undefined;

interface Body {
  uuid: string;
  finish: boolean;
  error_code: number;
  pages: Array<{ page_number: number; temp_download_url: string; annotated_url?: string }>;
  result: null | { student_id: string; qrcode: string; fills: number[][]; uncertain?: number[][] };
  detail?: string;
  revision?: number;
}
const posts = () => rx.received.filter((r) => r.method === 'POST' && r.path.endsWith('/review'));
const bodies = () => posts().map((p) => JSON.parse(p.body) as Body);

before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_RECOGNITION_END_GRACE_MS: '600000' } });
  rx = await startReceiver();
  stack = await reviewStack();
  other = rigSdk(rig.t.url, (await rig.t.createApp('other-review', { ess: true })).api_key);
  await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
  task = await rig.sdk.recognition.create({ callback_url: `${rx.url}/review` });
  // A scan bound to the task whose box sends nothing itself (one page a minute): the test sends the stack.
  box = await rig.box({ scanner: 'sim:?ppm=1' });
  await rig.load(box, 1);
  const s = await rig.sdk.scan.create({
    client_uuid: box.uuid,
    options: {
      direct_mode: 1,
      direct_addr: task.direct_addr,
      direct_page_size: 4,
      continuous: true,
      continuous_wait: 0,
    },
  });
  const batches = [];
  for (let i = 0; i < stack.pages.length; i += 4) batches.push(stack.pages.slice(i, i + 4));
  for (const [i, b] of batches.entries()) {
    const r = await sendDirect(task.direct_addr, s.direct_secret!, pagesManifest(s.uuid!, i + 1, b), b);
    assert.equal(r.status, 200, r.text);
  }
  const end = await sendDirect(
    task.direct_addr,
    s.direct_secret!,
    endManifest(s.uuid!, batches.length + 1, { batches: batches.length, pages: stack.pages.length }),
  );
  assert.equal(end.status, 200, end.text);
  await eventually(() => rx.received.some((r) => r.method === 'PUT'), 'the end callback', 90_000);
});
after(async () => {
  if (restarted) {
    await restarted.close();
    rmSync(restarted.dataDir, { recursive: true, force: true });
  } else {
    await rig.close();
  }
  await rx.close();
});

describe('the review loop (API and SDK)', () => {
  test("the recognizer's callbacks carry a 1-hour annotated image per page; the review list holds the students that need a person", async () => {
    const sent = bodies();
    assert.equal(sent.length, 4, JSON.stringify(rx.received.map((r) => [r.method, r.path, r.body.slice(0, 300)])));
    for (const b of sent)
      for (const p of b.pages) assert.match(String(p.annotated_url), /\/recognition\/annotated\/[A-Za-z0-9_-]+\.jpg$/);
    const img = await fetch(sent[1]!.pages[0]!.annotated_url!);
    assert.equal(img.status, 200, `${sent[1]!.pages[0]!.annotated_url}: ${await img.clone().text()}`);
    assert.equal(img.headers.get('content-type'), 'image/jpeg', (await img.clone().text()).slice(0, 300));
    const jpeg = Buffer.from(await img.arrayBuffer());
    assert.equal(jpeg.subarray(0, 2).toString('hex'), 'ffd8');
    assert.notEqual(
      createHash('sha256').update(jpeg).digest('hex'),
      createHash('sha256').update(stack.pages[2]!.jpeg).digest('hex'),
      'drawn over, not the page as scanned',
    );

    const list = await rig.sdk.recognition.reviewItems({ uuid: task.uuid });
    assert.equal(list.students, 4);
    assert.equal(list.state, 'ended');
    assert.deepEqual(
      list.items.map((i) => [i.student, i.status, i.revision, i.error_code]),
      [
        [2, 'open', 0, 0],
        [3, 'open', 0, 1001],
        [4, 'open', 0, 1004],
      ],
      'student 1 needs nobody',
    );
    assert.match(list.items[0]!.reasons.join(), /1 uncertain area/);
    assert.match(list.items[1]!.reasons.join(), /error 1001: student number: digit 1: 2 marks/);
    assert.match(
      list.items[2]!.reasons.join(),
      new RegExp(`error 1004: page ${stack.strayPage}: found 0 of 4 corner marks`),
    );
    assert.deepEqual(
      list.items[2]!.pages.map((p) => p.page_number),
      [7, 8, 9],
    );
    for (const p of list.items[0]!.pages) {
      assert.equal((await fetch(p.temp_download_url)).status, 200);
      assert.equal((await fetch(p.annotated_url)).status, 200);
    }
  });

  test("a page's overlay: every area with its state and score in image pixels, the student number and QR regions; the SDK fetches the annotated image", async () => {
    const page = await rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: 3 });
    assert.equal(page.student, 2);
    assert.equal(page.located, true);
    assert.ok(page.width > 1500 && page.height > 2200, `${page.width}x${page.height}`);
    const uncertain = page.areas.filter((a) => a.state === 'uncertain');
    assert.equal(uncertain.length, 1);
    assert.ok(uncertain[0]!.score >= 0 && uncertain[0]!.score <= 1, String(uncertain[0]!.score));
    assert.ok(page.areas.some((a) => a.state === 'filled') && page.areas.some((a) => a.state === 'empty'));
    for (const a of page.areas)
      assert.ok(
        a.cx > 0 && a.cx < page.width && a.cy > 0 && a.cy < page.height && a.rx > 10 && a.ry > 5,
        JSON.stringify(a),
      );
    assert.equal(page.student_number?.kind, 'bubbles');
    assert.equal(page.student_number?.outline.length, 4);
    assert.equal(page.qrcode?.outline.length, 4);
    const back = await rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: 4 });
    assert.equal(back.student_number, null);
    assert.equal(back.qrcode, null);
    const stray = await rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: stack.strayPage });
    assert.equal(stray.located, false);
    assert.match(stray.detail ?? '', /corner marks/);
    const jpeg = await rig.sdk.recognition.annotatedPage({ uuid: task.uuid, page_number: stack.strayPage });
    assert.equal(
      Buffer.from(jpeg).subarray(0, 2).toString('hex'),
      'ffd8',
      'an unlocated page is shown with the reason, not refused',
    );
    assert.equal((await refusal(rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: 99 }))).code, 20404);
  });

  test('another application gets exactly what a missing id gets; a forged or altered annotated link is refused', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const calls = (sdk: Boxhub, uuid: string) => [
      sdk.recognition.reviewItems({ uuid }),
      sdk.recognition.reviewPage({ uuid, page_number: 3 }),
      sdk.recognition.correct({ uuid, student: 2, revision: 0, areas: [{ chapter: 1, index: 9, filled: true }] }),
    ];
    const theirs = await Promise.all(calls(other, task.uuid).map(refusal));
    const none = await Promise.all(calls(rig.sdk, missing).map(refusal));
    for (const [i, e] of theirs.entries()) {
      assert.equal(e.code, 20404);
      assert.equal(
        e.msg.replace(task.uuid, 'X'),
        none[i]!.msg.replace(missing, 'X'),
        'the same answer as for a missing task',
      );
    }
    const link = (await rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: 3 })).annotated_url;
    const token = /annotated\/([^.]+)\.jpg$/.exec(link)![1]!;
    const altered = link.replace(token, token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA'));
    assert.equal((await fetch(altered)).status, 403);
    assert.equal((await fetch(link.replace(token, 'x'.repeat(40)))).status, 403);
    assert.equal(bodies().filter((b) => b.revision).length, 0, 'nothing was corrected');
  });

  test('corrections: an uncertain area set, a student number typed, a stray sheet marked; each a signed revision callback; the end is not sent again', async () => {
    const items = (await rig.sdk.recognition.reviewItems({ uuid: task.uuid })).items;
    const two = items[0]!;
    const unsure = two.result!.uncertain!.flatMap((areas, c) => areas.map((index) => ({ chapter: c + 1, index })));
    assert.equal(unsure.length, 1);
    // Refusals first: they record nothing.
    assert.equal(
      (
        await refusal(
          rig.sdk.recognition.correct({
            uuid: task.uuid,
            student: 2,
            revision: 0,
            areas: [{ chapter: 1, index: 99, filled: true }],
          }),
        )
      ).code,
      30421,
    );
    assert.equal(
      (await refusal(rig.sdk.recognition.correct({ uuid: task.uuid, student: 2, revision: 0 }))).code,
      30421,
    );
    assert.equal(
      (await refusal(rig.sdk.recognition.correct({ uuid: task.uuid, student: 9, revision: 0, student_id: '1' }))).code,
      20404,
    );
    const noNumber = await refusal(
      rig.sdk.recognition.correct({
        uuid: task.uuid,
        student: 3,
        revision: 0,
        areas: [{ chapter: 1, index: 1, filled: true }],
      }),
    );
    assert.equal(noNumber.code, 30421);
    assert.match(noNumber.msg, /type it/);
    const unreadable = await refusal(
      rig.sdk.recognition.correct({ uuid: task.uuid, student: 4, revision: 0, student_id: '12345678' }),
    );
    assert.equal(unreadable.code, 30421);
    assert.match(unreadable.msg, /cannot be read .*not a card/);
    // Raw: a body the SDK's types refuse.
    assert.equal(
      (
        await rig.api.post('/api/application/ess/review/correct', {
          uuid: task.uuid,
          student: 2,
          revision: 0,
          student_id: 'a b',
        })
      ).code,
      10001,
    );

    const fixed = await rig.sdk.recognition.correct({
      uuid: task.uuid,
      student: 2,
      revision: 0,
      areas: [{ ...unsure[0]!, filled: true }],
      reviewer: 'Ms. Example',
    });
    assert.equal(fixed.revision, 1);
    const stale = await refusal(
      rig.sdk.recognition.correct({
        uuid: task.uuid,
        student: 2,
        revision: 0,
        areas: [{ ...unsure[0]!, filled: false }],
      }),
    );
    assert.equal(stale.code, 30420);
    assert.deepEqual(stale.data, { revision: 1 });
    const typed = await rig.sdk.recognition.correct({
      uuid: task.uuid,
      student: 3,
      revision: 0,
      student_id: stack.studentIds[2]!,
    });
    const marked = await rig.sdk.recognition.correct({
      uuid: task.uuid,
      student: 4,
      revision: 0,
      not_a_card: [stack.strayPage],
    });

    await eventually(
      () => (bodies().filter((b) => b.revision).length === 3 ? true : undefined),
      'three revision callbacks',
      30_000,
    );
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    const revisions = posts().filter((p) => (JSON.parse(p.body) as Body).revision);
    for (const p of revisions)
      assert.equal(receiver.receive(p).type, 'recognition.result', "signed, and the spec's per-student body");
    assert.deepEqual(
      revisions.map((p) => p.id).sort(),
      [fixed.callback_id, typed.callback_id, marked.callback_id].sort(),
    );
    const [r2, r3, r4] = [fixed, typed, marked].map(
      (c) => JSON.parse(revisions.find((p) => p.id === c.callback_id)!.body) as Body,
    );
    const orig = bodies();
    assert.deepEqual(fixed.body.result, r2!.result, 'the answer carries the body sent');
    assert.equal(r2!.revision, 1);
    assert.equal(r2!.finish, false);
    assert.equal(r2!.error_code, 0);
    assert.deepEqual(r2!.result!.uncertain, [[], [], [], [], [], [], []]);
    const want = orig[1]!.result!.fills.map((f, c) =>
      c === unsure[0]!.chapter - 1 ? [...f, unsure[0]!.index].sort((a, b) => a - b) : f,
    );
    assert.deepEqual(r2!.result!.fills, want, 'the area the teacher set, the rest as read');
    assert.equal(r2!.result!.student_id, orig[1]!.result!.student_id);
    assert.equal(r3!.error_code, 0);
    assert.equal(r3!.result!.student_id, stack.studentIds[2]);
    assert.equal(r3!.result!.qrcode, exampleCard.qrcode);
    assert.equal(r3!.result!.fills.length, 7);
    assert.equal(r4!.error_code, 0, r4!.detail);
    assert.deepEqual(
      r4!.pages.map((p) => p.page_number),
      [7, 9],
      'the stray sheet left out',
    );
    assert.equal(r4!.result!.student_id, stack.studentIds[3]);
    for (const p of r4!.pages) assert.equal((await fetch(p.temp_download_url)).status, 200);
    assert.equal(rx.received.filter((r) => r.method === 'PUT').length, 1, 'the end callback is not sent twice');

    const after = await rig.sdk.recognition.reviewItems({ uuid: task.uuid });
    assert.deepEqual(
      after.items.map((i) => [i.student, i.status, i.revision]),
      [
        [2, 'resolved', 1],
        [3, 'resolved', 1],
        [4, 'resolved', 1],
      ],
    );
    const trail = after.items[0]!.corrections[0]!;
    assert.equal(trail.via, 'api');
    assert.equal(trail.reviewer, 'Ms. Example');
    assert.equal(trail.callback_id, fixed.callback_id);
    assert.equal(trail.callback_status, 'delivered');
    assert.ok(Math.abs(trail.created_at - Date.now()) < 120_000);
    assert.match(trail.key_id, /\S/);
    // The page now shows the teacher's decision.
    const page = await rig.sdk.recognition.reviewPage({ uuid: task.uuid, page_number: 3 });
    assert.equal(
      page.areas.find((a) => a.chapter === unsure[0]!.chapter && a.index === unsure[0]!.index)!.state,
      'filled',
    );
    // The callback log names revisions apart from the recognizer's results.
    const log = await rig.sdk.callbacks.list({ page: 1, task_uuid: task.uuid });
    assert.equal(log.callbacks.filter((c) => c.event === 'recognition.revision').length, 3);
    assert.equal(log.callbacks.filter((c) => c.event === 'recognition.end').length, 1);
  });

  test('the audit trail is append-only in the database, and corrections survive a restart', async () => {
    const db = rig.t.server.db.kysely;
    await assert.rejects(
      db
        .updateTable('recognition_corrections')
        .set({ reviewer: 'someone else' })
        .where('task_uuid', '=', task.uuid)
        .execute(),
      /append-only/,
    );
    await assert.rejects(
      db.deleteFrom('recognition_corrections').where('task_uuid', '=', task.uuid).execute(),
      /append-only/,
    );
    const before = await rig.sdk.recognition.reviewItems({ uuid: task.uuid });
    const { dataDir, pgSchema } = rig.t;
    await box.agent.stop();
    await rig.t.close({ keepData: true });
    restarted = await startTestServer({ reuse: { dataDir, pgSchema }, env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
    const sdk = rigSdk(restarted.url, rig.app.api_key);
    const again = await sdk.recognition.reviewItems({ uuid: task.uuid });
    const strip = (l: typeof before) => l.items.map((i) => ({ ...i, pages: i.pages.map((p) => p.page_number) }));
    assert.deepEqual(strip(again), strip(before), 'the same students, revisions, results and trail');
    const next = await sdk.recognition.correct({
      uuid: task.uuid,
      student: 2,
      revision: 1,
      areas: [
        { chapter: 1, index: 1, filled: false },
        { chapter: 1, index: 2, filled: true },
      ],
    });
    assert.equal(next.revision, 2);
    await eventually(
      () => (bodies().some((b) => b.revision === 2) ? true : undefined),
      'revision 2 after the restart',
      30_000,
    );
    assert.equal(rx.received.filter((r) => r.method === 'PUT').length, 1);
  });
});
