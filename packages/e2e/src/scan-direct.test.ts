// Direct transfer end to end (docs/direct-transfer.md): a real server, broker
// and simulated box scanning to a real receiver (the SDK's DirectTransferReceiver) on loopback
// over HTTP/1.1, cleartext HTTP/2 and TLS with ALPN; direct_mode 1 and 2; a receiver that fails
// for a while, one that is down past the give-up limit, a redirect, hostile answers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { decryptDirectPage, decryptScanItem, generateKeyPair, type Body } from '@boxhub/sdk';
import { tempStateDir } from '@boxhub/agent';
import { startRig, type Rig, type RigBox } from './fixtures.ts';
import { selfSignedCert, startDirectReceiver, type DirectMode, type TestDirectReceiver } from './direct-receiver.ts';

let rig: Rig;
let tls: { key: string; cert: string };
const receivers: TestDirectReceiver[] = [];
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  tls = selfSignedCert();
});
after(async () => {
  for (const r of receivers) await r.close();
  await rig.close();
});

async function receiver(mode: DirectMode): Promise<TestDirectReceiver> {
  const r = await startDirectReceiver(mode, tls);
  receivers.push(r);
  return r;
}

const finished = (box: RigBox, scan_uuid: string, ms = 30_000) =>
  rig.sdk.scan.waitForFinish({ client_uuid: box.uuid, scan_uuid }, { intervalMs: 50, timeoutMs: ms });

async function scan(
  box: RigBox,
  rx: TestDirectReceiver,
  options: NonNullable<Body<'/api/scan/create'>['options']>,
): Promise<{ uuid: string; secret: string }> {
  // The secret is known only from the create answer; the test receiver waits for it.
  const created = await rig.sdk.scan.create({
    client_uuid: box.uuid,
    options: { resolution: 100, direct_addr: rx.url, ...options },
  });
  assert.match(created.direct_secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
  rx.secret = created.direct_secret;
  return { uuid: created.uuid!, secret: created.direct_secret! };
}

const items = async (box: RigBox, scan_uuid: string) =>
  (await rig.sdk.scan.itemData({ client_uuid: box.uuid, scan_uuid, page: 1 })).items;

describe('pages reach the receiver in order', () => {
  for (const mode of ['http1', 'h2c', 'tls', 'tls-http1'] as const) {
    test(`${mode}: direct_mode 1, batches of direct_page_size, scan.end with totals, items without files`, async () => {
      const rx = await receiver(mode);
      const box = await rig.box({ direct: { ca: tls.cert } });
      // Five printed sides (duplex, one blank back skipped): batches of 2, 2 and 1.
      await rig.load(box, [
        { front: 'text', back: 'text' },
        { front: 'text', back: 'blank' },
        { front: 'text', back: 'text' },
      ]);
      const { uuid } = await scan(box, rx, { direct_mode: 1, direct_page_size: 2, duplex: true });
      const done = await finished(box, uuid);
      assert.equal(done.error_code, 0);
      assert.equal(done.total_pages, 5);
      assert.equal(done.total_file_size, undefined, 'no file size with direct_mode 1');

      const mine = rx.batches.filter((b) => b.scan_uuid === uuid);
      assert.deepEqual(
        mine.map((b) => [b.batch, b.pages.length]),
        [
          [1, 2],
          [2, 2],
          [3, 1],
        ],
      );
      const pages = mine.flatMap((b) => b.pages);
      assert.deepEqual(
        pages.map((p) => [p.paper_number, p.page_number, p.front]),
        [
          [1, 1, true],
          [1, 2, false],
          [2, 3, true],
          [3, 5, true],
          [3, 6, false],
        ],
      );
      for (const p of pages) {
        assert.equal(p.data.subarray(0, 2).toString('hex'), 'ffd8', 'a JPEG');
        assert.equal(createHash('sha256').update(p.data).digest('hex'), p.sha256);
        assert.equal(p.dpi, 100);
        assert.ok(p.width > 0 && p.height > 0);
      }
      assert.equal(mine[0]!.client_uuid, box.uuid);
      assert.deepEqual(
        rx.ends.filter((e) => e.scan_uuid === uuid).map((e) => [e.batch, e.error_code, e.totals]),
        [[4, 0, { batches: 3, pages: 5 }]],
      );

      const its = await items(box, uuid);
      assert.deepEqual(
        [...new Set(pages.map((p) => p.item_id))],
        its.map((i) => i.item_id),
        "the pages' item_id are the items of item_data",
      );
      for (const i of its) {
        for (const k of ['file_size', 'upload_spent', 'check_sum', 'cipher', 'temp_download_url'] as const)
          assert.equal(i[k], undefined, `${k} absent with direct_mode 1`);
      }
      const versions = new Set(rx.attempts.map((a) => a.httpVersion));
      assert.deepEqual(
        [...versions],
        [mode === 'http1' || mode === 'tls-http1' ? '1.1' : '2.0'],
        `HTTP version over ${mode}`,
      );
      assert.match(rx.attempts[0]!.userAgent, /^boxhub-box\//);
    });
  }

  test('the secret is kept sealed on the server; the service opens it for its own receivers', async () => {
    const rx = await receiver('http1');
    const box = await rig.box();
    await rig.load(box, 1);
    const { uuid, secret } = await scan(box, rx, { direct_mode: 1 });
    await finished(box, uuid);
    const row = (await rig.t.server.repos.tasks.find(rig.t.server.repos.tasks.db, uuid))!;
    assert.ok(!row.options.includes(secret.slice(6)), 'not in the task row in plain text');
    assert.match(row.options, /"secret":"enc:v1:/);
    assert.deepEqual(rig.t.server.services.scan.directOf(row), { mode: 1, page_size: 2, addr: rx.url, secret });
  });

  test('direct_mode 2: the pages and the PDF items too', async () => {
    const rx = await receiver('tls');
    const box = await rig.box({ direct: { ca: tls.cert } });
    await rig.load(box, 3);
    // item_seconds 0: one item for the batch however slowly a loaded machine scans it.
    const { uuid } = await scan(box, rx, { direct_mode: 2, direct_page_size: 10, item_seconds: 0 });
    const done = await finished(box, uuid);
    assert.equal(done.error_code, 0);
    assert.ok((done.total_file_size ?? 0) > 0);
    const mine = rx.batches.filter((b) => b.scan_uuid === uuid);
    assert.deepEqual(
      mine.map((b) => b.pages.length),
      [3],
      'one batch: the end of the paper ends it',
    );
    const its = await items(box, uuid);
    assert.equal(its.length, 1);
    assert.match(its[0]!.temp_download_url ?? '', /^http/);
    assert.match(its[0]!.check_sum ?? '', /^[0-9a-f]{32}$/);
    assert.ok(mine[0]!.pages.every((p) => p.item_id === its[0]!.item_id));
  });
});

describe('an encrypted scan', () => {
  test('pages leave the box encrypted, each with its cipher; the application opens them, and the PDF items too', async () => {
    const keys = await generateKeyPair();
    await rig.sdk.encryption.registerKey({ public_key: keys.publicKey });
    const rx = await receiver('http1');
    const box = await rig.box();
    await rig.load(box, [
      { front: 'text', back: 'text' },
      { front: 'text', back: 'blank' },
    ]);
    const { uuid } = await scan(box, rx, { direct_mode: 2, direct_page_size: 2, duplex: true, encrypt: true });
    const done = await finished(box, uuid);
    assert.equal(done.error_code, 0);
    const pages = rx.batches.filter((b) => b.scan_uuid === uuid).flatMap((b) => b.pages);
    assert.deepEqual(
      pages.map((p) => p.page_number),
      [1, 2, 3],
    );
    for (const p of pages) {
      assert.equal(p.content_type, 'application/octet-stream');
      assert.match(p.cipher ?? '', /^[0-9a-f]{160}$/);
      assert.notEqual(p.data.subarray(0, 2).toString('hex'), 'ffd8', 'not a JPEG on the wire');
      assert.equal(createHash('sha256').update(p.data).digest('hex'), p.sha256, 'sha256 of the encrypted bytes');
      const jpeg = await decryptDirectPage({ privateKey: keys.privateKey, scanUuid: uuid, page: p });
      assert.equal(jpeg.subarray(0, 2).toString('hex'), 'ffd8', 'a JPEG once opened');
      // The key is bound to its page: the same cipher does not open under another page number.
      await assert.rejects(
        decryptDirectPage({
          privateKey: keys.privateKey,
          scanUuid: uuid,
          page: { ...p, page_number: p.page_number + 10 },
        }),
      );
    }
    // direct_mode 2: the items are encrypted as in any encrypted scan.
    const [item] = await items(box, uuid);
    assert.match(item?.cipher ?? '', /^[0-9a-f]{160}$/);
    const data = Buffer.from(await (await fetch(item!.temp_download_url!)).arrayBuffer());
    const pdf = await decryptScanItem({ privateKey: keys.privateKey, scanUuid: uuid, item: item! as never, data });
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
  });
});

/** Answers `status` (with `headers`) without reading the request. */
const refuse =
  (status: number, headers: Record<string, string> = {}, body = '') =>
  (
    req: { resume(): void },
    res: { writeHead(s: number, h: Record<string, string>): unknown; end(b: string): void },
  ) => {
    req.resume();
    res.writeHead(status, headers);
    res.end(body);
    return true;
  };

describe('a receiver that fails, refuses or misbehaves', () => {
  test('fails for a while (503, 429 with Retry-After, a stored batch whose answer was lost): retried under the same webhook-id, stored once', async () => {
    const rx = await receiver('http1');
    const box = await rig.box();
    await rig.load(box, 4);
    const times: number[] = [];
    rx.answer = (req, res, n) => {
      times.push(Date.now());
      if (n <= 2) return refuse(503, {}, 'not now')(req, res);
      if (n === 3) return refuse(429, { 'retry-after': '30' })(req, res);
      if (n === 4) {
        // Stored, but the box hears 500: it sends the batch again and hears "duplicate".
        const w = res.writeHead.bind(res) as (s: number, h: unknown) => unknown;
        (res as { writeHead: unknown }).writeHead = (_s: number, h: unknown) => w(500, h);
      }
      return false;
    };
    const { uuid } = await scan(box, rx, { direct_mode: 1, direct_page_size: 2 });
    const done = await finished(box, uuid);
    assert.equal(done.error_code, 0);
    const first = rx.attempts.slice(0, 5);
    assert.deepEqual(
      first.map((a) => a.id),
      Array(5).fill(`dt_${uuid}_1`),
      'one webhook-id across the retries',
    );
    assert.deepEqual(
      first.map((a) => a.status),
      [503, 503, 429, 500, 200],
    );
    // Retry-After: 30 s is honoured up to the backoff cap (500 ms here; 60 s on a box).
    assert.ok(times[3]! - times[2]! >= 450, `waited ${times[3]! - times[2]!} ms after the 429`);
    const mine = rx.batches.filter((b) => b.scan_uuid === uuid);
    assert.deepEqual(
      mine.map((b) => b.batch),
      [1, 2],
      'each batch stored once',
    );
    assert.equal(rx.ends.filter((e) => e.scan_uuid === uuid).length, 1);
  });

  test('down past the give-up limit: the scan ends with 2102', async () => {
    const rx = await receiver('http1');
    await rx.close();
    const box = await rig.box({ direct: { retry: { giveUpMs: 1500 } } });
    await rig.load(box, 2);
    const t0 = Date.now();
    const { uuid } = await scan(box, rx, { direct_mode: 1 });
    const done = await finished(box, uuid);
    assert.equal(done.error_code, 2102);
    assert.ok(Date.now() - t0 >= 1000, 'it tried for a while first');
  });

  test('a redirect is not followed: 2102 at once', async () => {
    const rx = await receiver('http1');
    const other = await receiver('http1');
    rx.answer = (req, res) => refuse(307, { location: other.url })(req, res);
    const box = await rig.box();
    await rig.load(box, 2);
    const { uuid } = await scan(box, rx, { direct_mode: 2 });
    const done = await finished(box, uuid);
    assert.equal(done.error_code, 2102);
    assert.equal(other.attempts.length, 0, 'the redirect target was never called');
    assert.equal(rx.attempts.filter((a) => a.id === `dt_${uuid}_1`).length, 1, 'not retried');
  });

  test('hostile answers: a 401, a huge 200 answer, an answer that never comes', async () => {
    // 401: refused, the scan ends with 2102 after one attempt; scan.end is still tried once.
    const unauthorized = await receiver('http1');
    unauthorized.answer = (req, res) => refuse(401)(req, res);
    const a = await rig.box();
    await rig.load(a, 1);
    const s1 = await scan(a, unauthorized, { direct_mode: 1 });
    assert.equal((await finished(a, s1.uuid)).error_code, 2102);
    assert.deepEqual(
      unauthorized.attempts.map((x) => x.id),
      [`dt_${s1.uuid}_1`, `dt_${s1.uuid}_2`],
      'the batch once, then scan.end once',
    );

    // A 2xx with 20 MB of answer (to the batch and to scan.end): taken as acknowledged, the rest never read.
    const chatty = await receiver('tls');
    chatty.answer = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      const more = (): void => {
        while (sent < 20 && !res.destroyed) {
          sent++;
          if (!(res as { write(b: Buffer): boolean }).write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
        if (sent >= 20) res.end();
      };
      more();
      return true;
    };
    const b = await rig.box({ direct: { ca: tls.cert } });
    await rig.load(b, 1);
    const s2 = await scan(b, chatty, { direct_mode: 1 });
    assert.equal((await finished(b, s2.uuid)).error_code, 0);
    assert.deepEqual(
      chatty.attempts.map((x) => x.id),
      [`dt_${s2.uuid}_1`, `dt_${s2.uuid}_2`],
    );

    // A certificate the box does not trust: never sent, given up on.
    const untrusted = await receiver('tls');
    const d = await rig.box({ direct: { retry: { giveUpMs: 1000 } } });
    await rig.load(d, 1);
    const s4 = await scan(d, untrusted, { direct_mode: 1 });
    assert.equal((await finished(d, s4.uuid)).error_code, 2102);
    assert.equal(untrusted.attempts.length, 0);

    // Never answers: each attempt times out, and the box gives up.
    const silent = await receiver('h2c');
    silent.answer = (req) => {
      req.resume();
      return true;
    };
    const c = await rig.box({ direct: { timeoutMs: 300, retry: { giveUpMs: 1500 } } });
    await rig.load(c, 1);
    const s3 = await scan(c, silent, { direct_mode: 1 });
    assert.equal((await finished(c, s3.uuid)).error_code, 2102);
    assert.ok(silent.attempts.length >= 2, 'it tried again after a timeout');
    assert.ok(silent.attempts.every((x) => x.id === `dt_${s3.uuid}_1` || x.id === `dt_${s3.uuid}_2`));
  });
});

describe('the box keeps pages until they are acknowledged', () => {
  test('a box restarted while the receiver is down sends the same batches again, then scan.end', async () => {
    const rx = await receiver('http1');
    rx.answer = (req, res) => refuse(503)(req, res);
    const stateDir = tempStateDir();
    let again: RigBox | undefined;
    try {
      const box = await rig.box({ stateDir, direct: { retry: { giveUpMs: 60_000 } } });
      await rig.load(box, 4);
      const { uuid } = await scan(box, rx, { direct_mode: 1, direct_page_size: 2, duplex: false });
      const pagesDir = join(stateDir, 'scans', uuid, 'direct');
      await eventually(
        () =>
          (existsSync(pagesDir) && readdirSync(pagesDir).filter((f) => f.endsWith('.jpg')).length === 4) || undefined,
        "four pages on the box's disk",
      );
      await eventually(() => rx.attempts.length >= 2 || undefined, 'batch 1 tried');
      await box.agent.stop();
      const before = rx.attempts.map((a) => a.id);
      rx.answer = undefined;
      again = await rig.box({ stateDir, device: { uuid: box.uuid, secret: box.secret } });
      const done = await finished(box, uuid);
      assert.equal(done.error_code, 2205, 'the scan was interrupted by the restart');
      assert.deepEqual(new Set(before), new Set([`dt_${uuid}_1`]), 'only batch 1 was tried before the restart');
      const after = rx.attempts.slice(before.length).map((a) => a.id);
      assert.deepEqual(after, [`dt_${uuid}_1`, `dt_${uuid}_2`, `dt_${uuid}_3`], 'the same ids after it');
      assert.deepEqual(
        rx.batches.filter((b) => b.scan_uuid === uuid).map((b) => b.pages.map((p) => p.page_number)),
        [
          [1, 3],
          [5, 7],
        ],
      );
      assert.deepEqual(
        rx.ends.filter((e) => e.scan_uuid === uuid).map((e) => [e.error_code, e.totals]),
        [[2205, { batches: 2, pages: 4 }]],
      );
      await eventually(() => !existsSync(pagesDir) || undefined, 'the pages deleted once the job is done');
    } finally {
      await again?.agent.stop(); // before its disk goes
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('a stop: what is on the wire finishes, the rest is dropped, scan.end is tried once', async () => {
    const rx = await receiver('h2c');
    rx.answer = (req, res) => refuse(503)(req, res);
    const box = await rig.box({ direct: { retry: { giveUpMs: 60_000 } } });
    await rig.load(box, 3);
    const { uuid } = await scan(box, rx, { direct_mode: 1, direct_page_size: 1 });
    await eventually(() => rx.attempts.length >= 2 || undefined, 'batch 1 tried');
    await rig.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only on code 0
    assert.equal((await finished(box, uuid)).error_code, 0);
    await eventually(() => box.agent.jobs.states().length === 0 || undefined, 'the box let the job go');
    const ids = rx.attempts.map((a) => a.id);
    assert.equal(ids.at(-1), `dt_${uuid}_2`, 'scan.end follows the last batch tried');
    assert.ok(
      ids.slice(0, -1).every((id) => id === `dt_${uuid}_1`),
      'batches 2 and 3 were never sent',
    );
  });

  test('a stop with a receiver that never answers: the box lets go after a short grace, and scans again', async () => {
    const rx = await receiver('http1');
    rx.answer = (req) => {
      req.resume();
      return true;
    }; // never answered
    const box = await rig.box({ direct: { timeoutMs: 60_000, stopGraceMs: 300 } });
    await rig.load(box, 2);
    const { uuid } = await scan(box, rx, { direct_mode: 1 });
    await eventually(() => rx.attempts.length >= 1 || undefined, 'batch 1 on the wire');
    const t0 = Date.now();
    await rig.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only on code 0
    await eventually(() => box.agent.jobs.states().length === 0 || undefined, 'the box let the job go');
    assert.ok(Date.now() - t0 < 5000, `let go after ${Date.now() - t0} ms, not the 60 s of an attempt's timeout`);
    assert.deepEqual(
      rx.attempts.map((a) => a.id),
      [`dt_${uuid}_1`, `dt_${uuid}_2`],
      'the batch, then scan.end once',
    );
    const ok = await receiver('http1');
    await rig.load(box, 1);
    const next = await scan(box, ok, { direct_mode: 1 });
    assert.equal((await finished(box, next.uuid)).error_code, 0);
  });
});
