// The box's direct-transfer sender against a plain receiver on loopback: batching, the journal
// state it keeps, deleting pages once acknowledged, resuming from that state, giving up.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanError } from '@boxhub/protocol';
import { parseManifest } from '@boxhub/protocol/direct-wire.ts';
import { retryAfterMs } from './http.ts';
import { DirectSender, newDirectState, type DirectFailure, type DirectState } from './sender.ts';

interface Seen {
  id: string;
  meta: { type: string; batch: number; pages?: { page_number: number }[]; error_code?: number; totals?: unknown };
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A receiver that answers `status(n)` to the n-th request and records its manifest; a manifest
 *  the receivers' shared check refuses is answered 422 (the box gives up: the test fails). */
async function receiver(status: (n: number) => number = () => 200) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      const text = /\r\n\r\n(\{[^\r]*\})\r\n/.exec(body)![1]!;
      const meta = JSON.parse(text) as Seen['meta'];
      seen.push({ id: String(req.headers['webhook-id']), meta });
      const problem = parseManifest(text, { encrypted: true });
      if (typeof problem === 'string') {
        res.writeHead(422).end(problem);
        return;
      }
      res.writeHead(status(seen.length)).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    seen,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function sender(
  url: string,
  state: DirectState,
  o: { pageSize?: number; giveUpMs?: number; failures?: DirectFailure[]; now?: () => number } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-direct-'));
  dirs.push(dir);
  let saves = 0;
  const s = new DirectSender({
    task: 'scan-1',
    boxUuid: 'box-1',
    dir,
    state,
    now: o.now ?? Date.now,
    log: () => undefined,
    userAgent: 'boxhub-box/test',
    options: {
      mode: 1,
      page_size: o.pageSize ?? 2,
      addr: url,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    },
    save: async () => {
      saves++;
    },
    retry: { baseMs: 10, maxMs: 50, giveUpMs: o.giveUpMs ?? 5000 },
    onFailure: (f) => o.failures?.push(f),
  });
  return { s, dir, saves: () => saves };
}

const meta = (n: number) => ({
  item_id: 1,
  paper_number: n,
  page_number: 2 * n - 1,
  front: true,
  width: 10,
  height: 10,
  dpi: 100,
});
const jpeg = (n: number) => Buffer.from([0xff, 0xd8, n, 0xff, 0xd9]);

test('Retry-After: seconds or an HTTP date; anything else is ignored', () => {
  assert.equal(retryAfterMs('7', 0), 7000);
  assert.equal(retryAfterMs('Thu, 01 Jan 1970 00:00:10 GMT', 4000), 6000);
  assert.equal(retryAfterMs('soon', 0), undefined);
  assert.equal(retryAfterMs(undefined, 0), undefined);
});

test('pages become batches of page_size, cut at the end of the paper; acknowledged pages are deleted', async () => {
  const rx = await receiver();
  const state = newDirectState();
  const { s, dir } = sender(rx.url, state);
  for (let i = 1; i <= 3; i++) await s.add(jpeg(i), meta(i));
  await s.cut(); // the end of a batch of paper
  for (let i = 4; i <= 5; i++) await s.add(jpeg(i), meta(i));
  assert.equal(await s.finish(0), undefined);
  await s.close();
  await rx.close();
  assert.deepEqual(
    rx.seen.map((x) => [x.id, x.meta.type, x.meta.pages?.map((p) => p.page_number)]),
    [
      ['dt_scan-1_1', 'pages', [1, 3]],
      ['dt_scan-1_2', 'pages', [5]],
      ['dt_scan-1_3', 'pages', [7, 9]],
      ['dt_scan-1_4', 'scan.end', undefined],
    ],
  );
  assert.deepEqual(rx.seen.at(-1)!.meta.totals, { batches: 3, pages: 5 });
  assert.deepEqual(
    { ...state, open: state.open.length, queued: state.queued.length },
    { open: 0, queued: 0, acked: { batches: 3, pages: 5 }, last: 3, tried: 4, files: 5, ended: true },
  );
  assert.deepEqual(readdirSync(dir), [], 'every page deleted once acknowledged');
});

test("from the journal's state: the batches not acknowledged go again under their ids, open pages make the last batch", async () => {
  const down = await receiver(() => 503);
  const state = newDirectState();
  const first = sender(down.url, state, { giveUpMs: 60_000 });
  for (let i = 1; i <= 3; i++) await first.s.add(jpeg(i), meta(i));
  // The "agent stops" while batch 1 is being retried.
  while (down.seen.length < 2) await new Promise((r) => setTimeout(r, 5));
  first.s.halt();
  assert.equal(await first.s.finish(2205), undefined);
  await first.s.close();
  await down.close();
  assert.equal(state.ended, undefined, 'nothing ended by a halt');
  assert.deepEqual(
    state.queued.map((b) => b.batch),
    [1],
  );
  assert.equal(state.open.length, 1);
  assert.ok(
    state.queued[0]!.pages.every((p) => existsSync(p.file)),
    'pages kept on the disk',
  );

  const up = await receiver();
  const again = sender(up.url, JSON.parse(JSON.stringify(state)) as DirectState);
  assert.equal(await again.s.finish(ScanError.interrupted), undefined);
  await again.s.close();
  await up.close();
  assert.deepEqual(
    up.seen.map((x) => x.id),
    ['dt_scan-1_1', 'dt_scan-1_2', 'dt_scan-1_3'],
  );
  assert.equal(up.seen[2]!.meta.error_code, ScanError.interrupted);
});

test('gives up: after the limit on 5xx, at once on a refusal; scan.end is tried once with 2102', async () => {
  for (const [status, limit, want] of [
    [503, 300, /no 2xx .* after \d+ attempts/],
    [409, 60_000, /HTTP 409/],
  ] as const) {
    const rx = await receiver(() => status);
    const failures: DirectFailure[] = [];
    // The give-up limit is on the sender's clock: one that moves 20 ms each time it is read
    // makes the number of attempts the same on a loaded machine as on an idle one.
    let clock = 0;
    const { s } = sender(rx.url, newDirectState(), { giveUpMs: limit, failures, now: () => (clock += 20) });
    await s.add(jpeg(1), meta(1));
    const f = await s.finish(0);
    await s.close();
    await rx.close();
    assert.equal(f?.error_code, ScanError.direct_transfer_failed);
    assert.match(f!.message, want);
    assert.deepEqual(failures, [f], 'told once');
    const batch1 = rx.seen.filter((x) => x.id === 'dt_scan-1_1').length;
    if (status === 409) assert.equal(batch1, 1, 'a refusal is not retried');
    else {
      assert.ok(batch1 >= 3, `${batch1} attempts`);
      assert.match(f!.message, new RegExp(`after ${batch1} attempts`));
    }
    assert.deepEqual(rx.seen.at(-1)!.meta, {
      v: 1,
      type: 'scan.end',
      scan_uuid: 'scan-1',
      client_uuid: 'box-1',
      batch: 2,
      error_code: 2102,
      totals: { batches: 0, pages: 0 },
    });
  }
});
