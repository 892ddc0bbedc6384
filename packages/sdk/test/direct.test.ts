// The SDK's direct-transfer receiver (docs/direct-transfer.md) against the box's own request
// bytes (the agent's wire.ts): what it accepts, what it refuses and with which status; and the
// reference receiver of the docs, run as a program against a real server and simulated box.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { createSimulatedBox } from '@boxhub/agent';
import { buildRequest as buildStreamed, requestBytes } from '@boxhub/agent/scan/direct/wire.ts';
import type { Manifest } from '@boxhub/protocol/direct-wire.ts';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { DirectTransferReceiver, type DirectPagesBatch, type DirectScanEnd } from '@boxhub/sdk';

type Req = { headers: Record<string, string>; body: Buffer };
/** The box's request for these pages, its body as bytes. */
async function buildRequest(o: Parameters<typeof buildStreamed>[0]): Promise<Req> {
  const r = buildStreamed(o);
  return { headers: r.headers, body: await requestBytes(r) };
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const scan = randomUUID();
const jpeg = (n: number) => Buffer.concat([Buffer.from([0xff, 0xd8]), randomBytes(n), Buffer.from([0xff, 0xd9])]);
const page = (part: string, data: Buffer, n: number) => ({
  part,
  item_id: 1,
  paper_number: n,
  page_number: 2 * n - 1,
  front: true,
  width: 100,
  height: 140,
  dpi: 100,
  content_type: 'image/jpeg' as const,
  bytes: data.length,
  sha256: createHash('sha256').update(data).digest('hex'),
});

function request(
  batch: number,
  images: Buffer[],
  o: { timestamp?: number; key?: string; edit?: (m: Manifest) => void; partImages?: Buffer[] } = {},
): Promise<Req> {
  const manifest: Manifest = {
    v: 1,
    type: 'pages',
    scan_uuid: scan,
    client_uuid: 'box',
    batch,
    pages: images.map((d, i) => page(`p${i + 1}`, d, batch * 10 + i)),
  };
  o.edit?.(manifest);
  return buildRequest({
    manifest,
    images: o.partImages ?? images,
    secret: o.key ?? secret,
    timestamp: o.timestamp ?? Math.floor(Date.now() / 1000),
    userAgent: 'test',
  });
}

/** The request with one image part cut out (the manifest, and so the signature, unchanged). */
async function withoutPart(p: Promise<Req>, part: string): Promise<Req> {
  const r = await p;
  const boundary = /boundary=(\S+)/.exec(r.headers['content-type']!)![1]!;
  const start = r.body.indexOf(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="${part}"`);
  const end = r.body.indexOf(`\r\n--${boundary}`, start + 4);
  return { headers: r.headers, body: Buffer.concat([r.body.subarray(0, start), r.body.subarray(end)]) };
}

const relabel = async (p: Promise<Req>, id: string): Promise<Req> => {
  const r = await p;
  return { body: r.body, headers: { ...r.headers, 'webhook-id': id } };
};

function receiver(maxPageBytes?: number) {
  const batches: DirectPagesBatch[] = [];
  const ends: DirectScanEnd[] = [];
  const rx = new DirectTransferReceiver({
    secret: (s) => (s === scan ? secret : undefined),
    onPages: (b) => {
      batches.push(b);
    },
    onEnd: (e) => {
      ends.push(e);
    },
    ...(maxPageBytes ? { maxPageBytes } : {}),
  });
  return { rx, batches, ends };
}

describe('DirectTransferReceiver', () => {
  test("the box's signature is Standard Webhooks' (the reference library makes the same)", async () => {
    const r = await request(1, [jpeg(100)]);
    const meta = /\r\n\r\n(\{[^\r]*\})\r\n/.exec(r.body.toString('latin1'))![1]!;
    const ts = Number(r.headers['webhook-timestamp']);
    assert.equal(
      new Webhook(secret).sign(r.headers['webhook-id']!, new Date(ts * 1000), meta),
      r.headers['webhook-signature'],
    );
  });

  test('batches in order, stored once; a batch sent again is a duplicate; scan.end', async () => {
    const { rx, batches, ends } = receiver();
    const a = [jpeg(5000), jpeg(7000)];
    const r1 = await request(1, a);
    assert.deepEqual((await rx.receive({ headers: r1.headers, body: r1.body })).body, { ok: true });
    assert.deepEqual(
      batches[0]!.pages.map((p) => p.data),
      a,
    );
    const again = await request(1, a);
    const dup = await rx.receive({ headers: again.headers, body: again.body });
    assert.deepEqual([dup.status, dup.body], [200, { ok: true, duplicate: true }]);
    const r2 = await request(2, [jpeg(10)]);
    assert.equal((await rx.receive({ headers: r2.headers, body: r2.body })).status, 200);
    assert.deepEqual(
      batches.map((b) => b.batch),
      [1, 2],
    );
    const end = await buildRequest({
      manifest: {
        v: 1,
        type: 'scan.end',
        scan_uuid: scan,
        client_uuid: 'box',
        batch: 3,
        error_code: 0,
        totals: { batches: 2, pages: 3 },
      },
      images: [],
      secret,
      timestamp: Math.floor(Date.now() / 1000),
      userAgent: 't',
    });
    assert.equal((await rx.receive({ headers: end.headers, body: end.body })).status, 200);
    assert.deepEqual(
      ends.map((e) => [e.batch, e.totals]),
      [[3, { batches: 2, pages: 3 }]],
    );
  });

  test('scan.end after a batch never acknowledged (a give-up) is taken', async () => {
    const { rx, ends } = receiver();
    const r1 = await request(1, [jpeg(10)]);
    assert.equal((await rx.receive(r1)).status, 200);
    const end = (batch: number) =>
      buildRequest({
        manifest: {
          v: 1,
          type: 'scan.end',
          scan_uuid: scan,
          client_uuid: 'box',
          batch,
          error_code: 2102,
          totals: { batches: 1, pages: 1 },
        },
        images: [],
        secret,
        timestamp: Math.floor(Date.now() / 1000),
        userAgent: 't',
      });
    assert.deepEqual(
      (await rx.receive(await end(1))).body,
      { ok: true, duplicate: true },
      'the id of batch 1: taken for a repeat, not an end',
    );
    assert.equal((await rx.receive(await end(3))).status, 200);
    assert.deepEqual(
      ends.map((e) => [e.batch, e.error_code, e.totals]),
      [[3, 2102, { batches: 1, pages: 1 }]],
    );
  });

  test('refusals: signature, timestamp, gap, digest, size, parts, manifest, unknown scan, not multipart', async () => {
    const { rx, batches } = receiver(20_000);
    const status = async (p: Req | Promise<Req>) => {
      const r = await p;
      const a = await rx.receive({ headers: r.headers, body: r.body });
      return [a.status, a.body.error ?? ''] as const;
    };
    const img = jpeg(1000);
    const cases: Array<[string, Promise<Req>, number, RegExp]> = [
      ['another key', request(1, [img], { key: `whsec_${randomBytes(32).toString('base64')}` }), 401, /signature/],
      [
        '10 minutes old (a replay)',
        request(1, [img], { timestamp: Math.floor(Date.now() / 1000) - 600 }),
        401,
        /timestamp/i,
      ],
      ['a gap', request(2, [img]), 409, /batch 1 is expected/],
      ["another image than the manifest's", request(1, [img], { partImages: [jpeg(1000)] }), 422, /SHA-256/],
      [
        'a length that does not match',
        request(1, [img], {
          edit: (m) => {
            if (m.type === 'pages') m.pages[0]!.bytes += 1;
          },
        }),
        422,
        /bytes/,
      ],
      ['a part too large', request(1, [jpeg(30_000)]), 413, /larger/],
      [
        'a manifest field wrong',
        request(1, [img], {
          edit: (m) => {
            if (m.type === 'pages') m.pages[0]!.width = 0;
          },
        }),
        422,
        /meta\.pages\[0\]\.width must be a positive integer/,
      ],
      [
        'a part name not p1 … p10',
        request(1, [img], {
          edit: (m) => {
            if (m.type === 'pages') m.pages[0]!.part = 'page1';
          },
        }),
        422,
        /part must be p1/,
      ],
      ['a part missing', withoutPart(request(1, [img, jpeg(10)]), 'p2'), 422, /missing/],
      [
        'an unknown scan',
        request(1, [img], {
          edit: (m) => {
            m.scan_uuid = randomUUID();
          },
        }),
        503,
        /not known/,
      ],
      ['a webhook-id of another batch', relabel(request(1, [img]), `dt_${scan}_7`), 401, /signature/],
    ];
    for (const [what, r, want, msg] of cases) {
      const [got, error] = await status(r);
      assert.equal(got, want, `${what}: ${error}`);
      assert.match(error, msg, what);
    }
    const plain = await request(1, [img]);
    assert.equal(
      (await status({ headers: { ...plain.headers, 'content-type': 'application/json' }, body: plain.body }))[0],
      415,
    );
    assert.equal(batches.length, 0, 'nothing stored');
    // Still takes batch 1 afterwards: nothing was lost.
    assert.equal((await status(request(1, [img])))[0], 200);
  });
});

/** fetch sets Content-Length itself. */
const noLength = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'content-length'));

test('with Fastify: a content-type parser that leaves the body alone, and receive() on request.raw', async () => {
  const { default: Fastify } = await import('fastify');
  const { rx, batches } = receiver();
  const app = Fastify();
  app.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
  app.post('/pages', async (req, reply) => {
    const a = await rx.receive({ headers: req.headers, body: req.raw });
    if (a.close) reply.header('connection', 'close');
    return reply
      .code(a.status)
      .headers(a.headers ?? {})
      .send(a.body);
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const r = await request(1, [jpeg(3000), jpeg(4000)]);
    const res = await fetch(`${url}/pages`, { method: 'POST', headers: noLength(r.headers), body: r.body });
    assert.deepEqual([res.status, await res.json()], [200, { ok: true }]);
    assert.equal(batches[0]!.pages.length, 2);
    const gap = await request(3, [jpeg(10)]);
    const refused = await fetch(`${url}/pages`, { method: 'POST', headers: noLength(gap.headers), body: gap.body });
    assert.equal(refused.status, 409);
  } finally {
    await app.close();
  }
});

test('docs/direct-transfer.md shows the reference receiver as it is', () => {
  const root = new URL('../../../', import.meta.url);
  const doc = readFileSync(new URL('docs/direct-transfer.md', root), 'utf8');
  const shown = /<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/.exec(doc);
  assert.equal(shown?.[1], 'packages/sdk/examples/direct-receiver.ts');
  assert.ok(
    shown[2] === readFileSync(new URL(shown[1], root), 'utf8'),
    'docs/direct-transfer.md shows an outdated example: copy the file into the page',
  );
});

test('the reference receiver of docs/direct-transfer.md receives a scan', async () => {
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const app = await server.createApp();
  const reg = await server.registerDevice();
  assert.equal((await app.api.post('/api/client/bind', { uuid: reg.uuid, name: 'box' })).code, 0);
  const box = createSimulatedBox({
    url: server.mqttUrl,
    uuid: reg.uuid,
    secret: reg.secret,
    scanner: 'sim:?paper=3',
    backoff: { baseMs: 50, maxMs: 500 },
  });
  box.agent.start();
  const out = mkdtempSync(join(tmpdir(), 'boxhub-direct-'));
  try {
    await eventually(
      async () =>
        parseState((await server.server.repos.devices.findByUuid(reg.uuid))!)?.scanner.adf_loaded === true || undefined,
      'the box online with paper',
    );
    const root = new URL('../../../', import.meta.url).pathname;
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--conditions=@boxhub/source', '--import', 'tsx', join(root, 'packages/sdk/examples/direct-receiver.ts')],
        {
          cwd: root,
          timeout: 60_000,
          env: {
            ...process.env,
            NODE_OPTIONS: '',
            BOXHUB_URL: server.url,
            BOXHUB_API_KEY: app.api_key,
            BOXHUB_DEVICE: reg.uuid,
            PORT: '0',
            OUT: out,
          },
        },
        (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve({ stdout })),
      ),
    );
    const uuid = /^scanning (\S+)$/m.exec(stdout)?.[1];
    assert.ok(uuid, stdout);
    assert.match(stdout, /^batch 1: pages 1, 3$/m);
    assert.match(stdout, /^batch 2: pages 5$/m);
    assert.match(stdout, /^scan ended with error 0: 3 pages in 2 batches$/m);
    assert.deepEqual(readdirSync(out).sort(), [`${uuid}-1.jpg`, `${uuid}-3.jpg`, `${uuid}-5.jpg`]);
    assert.equal(
      readFileSync(join(out, `${uuid}-1.jpg`))
        .subarray(0, 2)
        .toString('hex'),
      'ffd8',
    );
  } finally {
    await box.agent.stop();
    await server.close();
    rmSync(out, { recursive: true, force: true });
  }
});
