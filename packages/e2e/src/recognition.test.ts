// Feedback-card recognition as a service (docs/cards.md, "Recognition as a service"): ess/create,
// card templates, the direct- transfer address (boxhub direct v1, sent here by a sender written
// from the doc), per-student callbacks against the synthetic generator's truth, the end callback,
// and hostile input at the address answered clearly with nothing lost.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { cardStack, exampleCard, type CardStack } from './card-stack.ts';
import { endManifest, pagesManifest, sendDirect, type DirectPage } from './direct-sender.ts';
import { CallbackReceiver, type Boxhub, type CardDefinition, type RecognitionTask } from '@boxhub/sdk';
import { refusal, rigSdk, startRig, type Rig, type RigBox } from './fixtures.ts';

let rig: Rig;
let rx: Receiver;
let stack: CardStack;
before(async () => {
  rig = await startRig({
    env: {
      BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
      BOXHUB_DIRECT_MAX_PAGE_BYTES: String(2 * 1024 * 1024),
      BOXHUB_RECOGNITION_END_GRACE_MS: '600000',
    },
  });
  rx = await startReceiver();
  stack = await cardStack(3);
});
after(async () => {
  await rig.close();
  await rx.close();
});

type Task = RecognitionTask;
interface Result {
  uuid: string;
  finish: boolean;
  error_code: number;
  pages: Array<Record<string, unknown>>;
  result: null | { student_id: string; qrcode: string; fills: number[][]; uncertain?: number[][] };
  detail?: string;
}

const essCreate = (path: string, sdk: Boxhub = rig.sdk) => sdk.recognition.create({ callback_url: `${rx.url}${path}` });

/**
 * A recognition task with a scan bound to it, whose box sends nothing while the test sends
 * batches itself: its scanner takes a minute for its one page (ppm=1), and waits for more.
 */
async function boundScan(path: string): Promise<{ task: Task; scan: string; secret: string; box: RigBox }> {
  const t = await essCreate(path);
  const box = await rig.box({ scanner: 'sim:?ppm=1' });
  await rig.load(box, 1);
  const s = await rig.sdk.scan.create({
    client_uuid: box.uuid,
    options: { direct_mode: 1, direct_addr: t.direct_addr, direct_page_size: 4, continuous: true, continuous_wait: 0 },
  });
  assert.match(s.direct_secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
  return { task: t, scan: s.uuid!, secret: s.direct_secret!, box };
}

/** A copy of a JPEG whose frame header states another size (the receiver reads only that). */
function withFrameSize(jpeg: Uint8Array, width: number, height: number): Uint8Array {
  const b = Buffer.from(jpeg);
  for (let i = 2; i + 9 < b.length; ) {
    const marker = b[i + 1]!;
    if (marker === 0xc0 || marker === 0xc2) {
      b.writeUInt16BE(height, i + 5);
      b.writeUInt16BE(width, i + 7);
      return b;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  throw new Error('no frame header');
}

const callbacksAt = (path: string) => rx.received.filter((r) => r.path.endsWith(path));

describe('recognition tasks', () => {
  test('ess/create: 20005 without the capability, callback_url checked, an unguessable address per task', async () => {
    const plain = await rig.t.createApp('no-ess');
    const refused = await refusal(essCreate('/x', rigSdk(rig.t.url, plain.api_key)));
    assert.equal(refused.code, 20005);
    assert.equal((await refusal(essCreate(`/${'a'.repeat(200)}`))).code, 10001);
    assert.equal((await refusal(rig.sdk.recognition.create({ callback_url: 'ftp://example.com/x' }))).code, 10001);
    // Raw: a body without its required field, which the SDK's types do not let an application send.
    assert.equal((await rig.api.post('/api/application/ess/create', {})).code, 10001);
    const a = await essCreate('/a');
    const b = await essCreate('/b');
    assert.match(a.direct_addr, new RegExp(`^${rig.t.url}/direct/[A-Za-z0-9_-]{43}$`));
    assert.notEqual(a.direct_addr, b.direct_addr);
    assert.notEqual(a.uuid, b.uuid);
    assert.ok(Math.abs(a.expires_at - (Date.now() / 1000 + 86400)) < 120, 'expires in about 24 hours (Unix seconds)');
  });

  test('card templates: create (id, PDF link, layout), list, info, delete; a bad definition lists every problem', async () => {
    // Raw: a definition the SDK's types refuse, as a hand-written JSON file might be.
    const bad = await refusal(
      rig.sdk.recognition.createTemplate({ definition: { id: 'x y', chapters: [] } as unknown as CardDefinition }),
    );
    assert.equal(bad.code, 30410);
    assert.match(bad.msg, /id/);
    assert.match(bad.msg, /chapters/);
    const made = await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
    assert.match(made.template_id, /^[0-9a-f]{8}$/);
    // The API declares layout as an open object (docs/cards.md describes it); the test names what it reads.
    const layout = made.layout as { layout_id: string; sides: unknown[] };
    assert.equal(layout.layout_id, made.template_id);
    assert.equal(layout.sides.length, 2);
    const pdf = Buffer.from(await (await fetch(made.pdf_url)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    const again = await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
    assert.equal(again.template_id, made.template_id, 'the same definition is the same template');
    const list = await rig.sdk.recognition.listTemplates();
    assert.deepEqual(
      list.templates.map((t) => t.template_id),
      [made.template_id],
    );
    assert.equal((list.templates[0] as { layout?: unknown }).layout, undefined);
    const other = rigSdk(rig.t.url, (await rig.t.createApp('other-templates', { ess: true })).api_key);
    assert.deepEqual((await other.recognition.listTemplates()).templates, [], 'templates are per application');
    assert.equal((await refusal(other.recognition.templateInfo({ template_id: made.template_id }))).code, 20404);
    const extra = await rig.sdk.recognition.createTemplate({
      definition: { ...exampleCard, id: 'to-delete', chapters: [{ areas: 5 }] },
    });
    await rig.sdk.recognition.deleteTemplate({ template_id: extra.template_id }); // resolves only on code 0
    assert.equal((await refusal(rig.sdk.recognition.deleteTemplate({ template_id: extra.template_id }))).code, 20404);
  });

  test("another application's recognition address is refused at scan create however it is written (30402)", async () => {
    const other = rigSdk(rig.t.url, (await rig.t.createApp('other-addresses', { ess: true })).api_key);
    const theirs = (await other.recognition.create({ callback_url: `${rx.url}/theirs` })).direct_addr;
    const token = theirs.slice(theirs.lastIndexOf('/') + 1);
    const base = rig.t.url;
    const box = await rig.box();
    await rig.load(box, 1);
    for (const addr of [
      theirs,
      `${base}/direct/./${token}`,
      `${base}/direct/x/../${token}`,
      `${base}/direct/%2e/${token}`,
      `${base}/direct/${token}?page=1`,
      `${base}/direct/${token}#h2c`,
      `${base.replace('http://', 'HTTP://')}/direct/${token}`,
      `${base}/direct/%${token.charCodeAt(0).toString(16)}${token.slice(1)}`,
      `${base}/direct/not-a-token`,
      `${base}/direct/${token}/`,
    ]) {
      const r = await refusal(
        rig.sdk.scan.create({ client_uuid: box.uuid, options: { direct_mode: 1, direct_addr: addr } }),
      );
      assert.equal(r.code, 30402, `${addr}: ${r.msg}`);
    }
  });

  test('a stack sent to the address: one callback per student, in scan order, against the truth; replays change nothing; then the end PUT', async () => {
    await rig.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
    const { task, scan, secret } = await boundScan('/stack');
    // One recognition task serves one scan.
    const box2 = await rig.box();
    await rig.load(box2, 1);
    const second = await refusal(
      rig.sdk.scan.create({ client_uuid: box2.uuid, options: { direct_mode: 1, direct_addr: task.direct_addr } }),
    );
    assert.equal(second.code, 30401, second.msg);
    assert.match(second.msg, new RegExp(scan));
    // The service must read the pages: an encrypted scan to a recognition address is refused.
    const sealed = await refusal(
      rig.sdk.scan.create({
        client_uuid: box2.uuid,
        options: { direct_mode: 1, direct_addr: task.direct_addr, encrypt: true },
      }),
    );
    assert.equal(sealed.code, 30207, sealed.msg);
    // Recognition reads up to 600 dpi; its receiver takes no larger pages.
    const fine = await refusal(
      rig.sdk.scan.create({
        client_uuid: box2.uuid,
        options: { direct_mode: 1, direct_addr: task.direct_addr, resolution: 1200 },
      }),
    );
    assert.equal(fine.code, 10001, fine.msg);
    assert.match(fine.msg, /options\.resolution 1200: a recognition task reads scans of 100 to 600 dpi/);

    const batches: DirectPage[][] = [];
    for (let i = 0; i < stack.pages.length; i += 4) batches.push(stack.pages.slice(i, i + 4));
    for (const [i, b] of batches.entries()) {
      const r = await sendDirect(task.direct_addr, secret, pagesManifest(scan, i + 1, b), b);
      assert.equal(r.status, 200, r.text);
      if (i === 0) {
        // The box's retry of a batch it got no answer for: same webhook-id, new timestamp.
        const again = await sendDirect(task.direct_addr, secret, pagesManifest(scan, 1, b), b, {
          timestamp: Math.floor(Date.now() / 1000) + 1,
        });
        assert.equal(again.status, 200, again.text);
        assert.match(again.text, /duplicate/);
      }
    }
    const end = await sendDirect(
      task.direct_addr,
      secret,
      endManifest(scan, batches.length + 1, { batches: batches.length, pages: stack.pages.length }),
    );
    assert.equal(end.status, 200, end.text);
    assert.equal(
      (
        await sendDirect(
          task.direct_addr,
          secret,
          endManifest(scan, batches.length + 1, { batches: batches.length, pages: stack.pages.length }),
        )
      ).status,
      200,
      'scan.end again',
    );

    await eventually(() => callbacksAt('/stack').some((r) => r.method === 'PUT'), 'the end callback', 60_000);
    const got = callbacksAt('/stack');
    const posts = got.filter((r) => r.method === 'POST');
    assert.equal(posts.length, stack.expected.length, 'one callback per student, no more');
    assert.equal(got.at(-1)!.method, 'PUT', 'the end comes after every result');
    // The SDK's receiver checks each callback's signature and its body's schema.
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    for (const [i, p] of posts.entries()) {
      assert.equal(p.headers['user-agent'], 'SVC');
      assert.equal(p.headers['content-type'], 'application/json');
      assert.ok(p.id);
      const event = receiver.receive(p);
      assert.equal(event.type, 'recognition.result');
      const body = JSON.parse(p.body) as Result;
      const want = stack.expected[i]!;
      assert.equal(body.uuid, task.uuid);
      assert.equal(
        body.finish,
        i === posts.length - 1,
        `finish only on the last student: ${JSON.stringify(posts.map((q) => [JSON.parse(q.body).error_code, JSON.parse(q.body).detail]))}`,
      );
      assert.equal(body.error_code, 0, body.detail);
      assert.deepEqual(
        body.pages.map(({ temp_download_url: _u, annotated_url: _a, ...rest }) => rest),
        want.pages,
        "the student's pages, in scan order",
      );
      for (const p of body.pages)
        assert.match(
          String(p.annotated_url),
          /\/recognition\/annotated\/[A-Za-z0-9_-]+\.jpg$/,
          "each page's annotated image (docs/cards.md, the review loop)",
        );
      assert.equal(body.result!.student_id, want.result!.student_id);
      assert.equal(body.result!.qrcode, want.result!.qrcode);
      assert.deepEqual(body.result!.fills, want.result!.fills);
      const page = stack.pages.find((s) => s.source.page_number === want.pages[0]!.page_number)!;
      const img = Buffer.from(await (await fetch(String(body.pages[0]!.temp_download_url))).arrayBuffer());
      assert.equal(
        createHash('sha256').update(img).digest('hex'),
        createHash('sha256').update(page.jpeg).digest('hex'),
        'the page image as sent',
      );
    }
    const endEvent = receiver.receive(got.at(-1)!);
    assert.equal(endEvent.type, 'recognition.end');
    assert.deepEqual(JSON.parse(got.at(-1)!.body), { uuid: task.uuid, finish: true });
    // The box sends scan.end again when its answer was lost: the same answer, after the end too.
    const endAgain = await sendDirect(
      task.direct_addr,
      secret,
      endManifest(scan, batches.length + 1, { batches: batches.length, pages: stack.pages.length }),
    );
    assert.equal(endAgain.status, 200, endAgain.text);
    const batchAgain = await sendDirect(task.direct_addr, secret, pagesManifest(scan, 1, batches[0]!), batches[0]!);
    assert.equal(batchAgain.status, 200, batchAgain.text);
    // The address is spent: the task has ended.
    const late = await sendDirect(
      task.direct_addr,
      secret,
      pagesManifest(scan, batches.length + 2, batches[0]!),
      batches[0]!,
    );
    assert.equal(late.status, 410, late.text);
  });

  test('hostile input at the address gets a clear answer and loses nothing', async () => {
    const { task, scan, secret } = await boundScan('/hostile');
    const page = stack.pages[0]!;
    const one = [page];
    const ok = pagesManifest(scan, 1, one);

    const unknown = await sendDirect(`${rig.t.url}/direct/${'A'.repeat(43)}`, secret, ok, one);
    assert.equal(unknown.status, 404);
    const badSig = await sendDirect(task.direct_addr, `whsec_${Buffer.alloc(32, 7).toString('base64')}`, ok, one);
    assert.equal(badSig.status, 401);
    assert.match(badSig.text, /signature/);
    const old = await sendDirect(task.direct_addr, secret, ok, one, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    assert.equal(old.status, 401);
    assert.match(old.text, /timestamp/);
    const gap = await sendDirect(task.direct_addr, secret, pagesManifest(scan, 2, one), one);
    assert.equal(gap.status, 409);
    assert.match(gap.text, /expected is 1/);
    const tampered = Buffer.from(page.jpeg);
    tampered[tampered.length - 10] = tampered[tampered.length - 10]! ^ 0xff;
    const digest = await sendDirect(task.direct_addr, secret, ok, one, { parts: [{ name: 'p1', bytes: tampered }] });
    assert.equal(digest.status, 422);
    assert.match(digest.text, /SHA-256/);
    const short = await sendDirect(task.direct_addr, secret, ok, one, {
      parts: [{ name: 'p1', bytes: page.jpeg.subarray(0, 1000) }],
    });
    assert.equal(short.status, 422);
    const missing = await sendDirect(task.direct_addr, secret, ok, one, { parts: [] });
    assert.equal(missing.status, 422);
    const big = new Uint8Array(3 * 1024 * 1024);
    const declared = await sendDirect(
      task.direct_addr,
      secret,
      pagesManifest(scan, 1, [{ jpeg: big, source: page.source }]),
      [{ jpeg: big, source: page.source }],
    );
    assert.equal(declared.status, 413, declared.text);
    const undeclared = await sendDirect(task.direct_addr, secret, ok, one, { parts: [{ name: 'p1', bytes: big }] });
    assert.equal(undeclared.status, 413, undeclared.text);
    // The manifest's size must be the image's, and the image no larger than a page at 600 dpi
    // (docs/direct-transfer.md): a 16000 × 16000 JPEG of a few kB would decode to 768 MB.
    const okMeta = (ok.pages as Array<Record<string, unknown>>)[0]!;
    const lied = await sendDirect(
      task.direct_addr,
      secret,
      { ...ok, pages: [{ ...okMeta, width: Number(okMeta.width) + 1 }] },
      one,
    );
    assert.equal(lied.status, 422, lied.text);
    assert.match(lied.text, /the manifest says/);
    const huge = { jpeg: withFrameSize(page.jpeg, 16000, 16000), source: page.source };
    const hugeStated = await sendDirect(task.direct_addr, secret, pagesManifest(scan, 1, [huge]), [huge]);
    assert.equal(hugeStated.status, 413, hugeStated.text);
    assert.match(hugeStated.text, /at most 7016 × 10200/);
    const hugeHidden = await sendDirect(
      task.direct_addr,
      secret,
      {
        ...pagesManifest(scan, 1, [huge]),
        pages: [{ ...okMeta, bytes: huge.jpeg.length, sha256: createHash('sha256').update(huge.jpeg).digest('hex') }],
      },
      [huge],
    );
    assert.equal(hugeHidden.status, 422, `a manifest that understates the size: ${hugeHidden.text}`);
    const wrongId = await sendDirect(task.direct_addr, secret, ok, one, { id: `dt_${scan}_9` });
    assert.equal(wrongId.status, 400);
    // The manifest is checked as the SDK's receiver checks it (@boxhub/protocol's direct-wire.ts).
    const okPage = (ok.pages as Array<Record<string, unknown>>)[0]!;
    const partName = await sendDirect(task.direct_addr, secret, { ...ok, pages: [{ ...okPage, part: 'page1' }] }, one, {
      parts: [{ name: 'page1', bytes: page.jpeg }],
    });
    assert.equal(partName.status, 400, partName.text);
    assert.match(partName.text, /meta\.pages\[0\]\.part must be p1 … p10/);
    const encrypted = await sendDirect(
      task.direct_addr,
      secret,
      { ...ok, pages: [{ ...okPage, content_type: 'application/octet-stream', cipher: 'cd'.repeat(80) }] },
      one,
    );
    assert.equal(encrypted.status, 400, encrypted.text);
    assert.match(encrypted.text, /takes no encrypted pages/);
    for (const type of ['text/plain', 'application/json']) {
      const wrongType = await fetch(task.direct_addr, {
        method: 'POST',
        body: '{"v":1}',
        headers: {
          'content-type': type,
          'webhook-id': `dt_${scan}_1`,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,x',
        },
      });
      assert.equal(wrongType.status, 415, `${type}: never a 2xx the box would take for "stored"`);
    }
    const otherScan = await sendDirect(task.direct_addr, secret, { ...ok, scan_uuid: 'another' }, one, {
      id: 'dt_another_1',
    });
    assert.equal(otherScan.status, 403);

    // A page of another application's card: stored and read, and its student fails clearly.
    const other = await rig.t.createApp('other-cards', { ess: true });
    const foreign = { ...exampleCard, id: 'foreign-card', qrcode: 'foreign', chapters: [{ areas: 20 }, { areas: 30 }] };
    await rigSdk(rig.t.url, other.api_key).recognition.createTemplate({ definition: foreign });
    const { planTemplate } = await import('@boxhub/recognizer');
    const { renderScan } = await import('@boxhub/recognizer/synthetic/render-scan.ts');
    const plan = await planTemplate(foreign);
    const foreignPage = {
      jpeg: await renderScan(plan.cards[0]!.sides[0]!.ops, [], { dpi: 200 }),
      source: { ...page.source, page_number: 3, paper_number: 2, front: true },
    };

    // Nothing refused was kept: batch 1 is still the one expected.
    const batch = [page, stack.pages[1]!, foreignPage];
    const accepted = await sendDirect(task.direct_addr, secret, pagesManifest(scan, 1, batch), batch);
    assert.equal(accepted.status, 200, accepted.text);
    const endGap = await sendDirect(task.direct_addr, secret, endManifest(scan, 2, { batches: 1, pages: 5 }));
    assert.equal(endGap.status, 409, 'totals that do not match what was received');
    assert.equal(
      (await sendDirect(task.direct_addr, secret, endManifest(scan, 2, { batches: 1, pages: 3 }))).status,
      200,
    );
    await eventually(() => callbacksAt('/hostile').some((r) => r.method === 'PUT'), 'the end callback', 60_000);
    const bodies = callbacksAt('/hostile')
      .filter((r) => r.method === 'POST')
      .map((r) => JSON.parse(r.body) as Result);
    assert.equal(bodies.length, 2, JSON.stringify(bodies.map((b) => [b.error_code, b.detail])));
    assert.equal(
      bodies[0]!.error_code,
      0,
      `the student sent once the refusals were over is read in full: ${bodies[0]!.detail}`,
    );
    assert.deepEqual(bodies[0]!.result!.fills, stack.expected[0]!.result!.fills);
    assert.equal(bodies[1]!.result, null);
    assert.equal(bodies[1]!.error_code, 1003, 'a card of another application: its chapters cannot be located');
    assert.match(bodies[1]!.detail ?? '', /layout [0-9a-f]{8} is not one of this application's card templates/);
    assert.equal(bodies[1]!.finish, true);
  });
});

describe('the end of a recognition', () => {
  test('a scan that sent no page: one callback 50003, then the end', async () => {
    const { task, scan, secret } = await boundScan('/empty');
    assert.equal(
      (await sendDirect(task.direct_addr, secret, endManifest(scan, 1, { batches: 0, pages: 0 }))).status,
      200,
    );
    await eventually(() => callbacksAt('/empty').some((r) => r.method === 'PUT'), 'the end callback', 30_000);
    const got = callbacksAt('/empty');
    assert.deepEqual(
      got.map((r) => r.method),
      ['POST', 'PUT'],
    );
    const body = JSON.parse(got[0]!.body) as Result;
    assert.equal(body.error_code, 50003);
    assert.equal(body.result, null);
    assert.deepEqual(body.pages, []);
    assert.equal(body.finish, true);
  });

  test('a transfer that broke off (the scan ended, no scan.end came): the open student gets 1005, then the end', async () => {
    const r2 = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1', BOXHUB_RECOGNITION_END_GRACE_MS: '300' } });
    try {
      await r2.sdk.recognition.createTemplate({ definition: { ...exampleCard } });
      const t = await r2.sdk.recognition.create({ callback_url: `${rx.url}/broken` });
      const box = await r2.box({ scanner: 'sim:?ppm=1' });
      await r2.load(box, 1);
      // Continuous: the scan ends only when stopped, after the batch below.
      const s = await r2.sdk.scan.create({
        client_uuid: box.uuid,
        options: { direct_mode: 1, direct_addr: t.direct_addr, continuous: true, continuous_wait: 0 },
      });
      // The first student whole, the second's front only; then nothing more.
      const sent = stack.pages.slice(0, 3);
      assert.equal(
        (await sendDirect(t.direct_addr, s.direct_secret!, pagesManifest(s.uuid!, 1, sent), sent)).status,
        200,
      );
      await eventually(
        () => callbacksAt('/broken').length > 0,
        "the first student, finished by the second's first page",
      );
      await r2.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only on code 0
      await eventually(() => callbacksAt('/broken').some((r) => r.method === 'PUT'), 'the end callback', 30_000);
      const bodies = callbacksAt('/broken')
        .filter((r) => r.method === 'POST')
        .map((r) => JSON.parse(r.body) as Result);
      assert.deepEqual(
        bodies.map((b) => [b.error_code, b.finish]),
        [
          [0, false],
          [1005, true],
        ],
      );
      assert.equal(bodies[1]!.pages.length, 1);
      assert.equal(bodies[1]!.result, null);
    } finally {
      await r2.close();
    }
  });
});
