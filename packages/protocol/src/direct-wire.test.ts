// The one check of a boxhub direct v1 manifest (docs/direct-transfer.md) that the service's
// recognition receiver and the SDK's receiver share: what it takes, and each refusal's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScanOptions } from './api/scan.ts';
import { checkManifest, MAX_PAGES_PER_BATCH, parseManifest, webhookId, type PagesManifest } from './direct-wire.ts';

const sha = 'ab'.repeat(32);
const cipher = 'cd'.repeat(80);
const page = (i: number) => ({
  part: `p${i + 1}`,
  item_id: 1,
  paper_number: i + 1,
  page_number: 2 * i + 1,
  front: true,
  width: 1654,
  height: 2339,
  dpi: 200,
  content_type: 'image/jpeg',
  bytes: 1000 + i,
  sha256: sha,
});
const pages = (n = 2): Record<string, unknown> => ({
  v: 1,
  type: 'pages',
  scan_uuid: 'scan-1',
  client_uuid: 'box-1',
  batch: 3,
  pages: Array.from({ length: n }, (_, i) => page(i)),
});
const end = (): Record<string, unknown> => ({
  v: 1,
  type: 'scan.end',
  scan_uuid: 'scan-1',
  client_uuid: 'box-1',
  batch: 4,
  error_code: 0,
  totals: { batches: 3, pages: 6 },
});
/** The manifest with `edit` applied (to a copy). */
// biome-ignore lint/suspicious/noExplicitAny: the edits break the manifest's shape on purpose, field by field
const edited = (m: Record<string, unknown>, edit: (m: Record<string, any>) => void) => {
  const c = structuredClone(m);
  edit(c);
  return JSON.stringify(c);
};

test('a batch and an end as the box sends them are taken, rebuilt from the fields it knows', () => {
  const m = parseManifest(
    edited(pages(), (m) => {
      m.extra = 1;
      m.pages[0].extra = 2;
    }),
  ) as PagesManifest;
  assert.equal(typeof m, 'object', String(m));
  assert.deepEqual(m, pages());
  assert.deepEqual(parseManifest(JSON.stringify(end())), end());
  assert.deepEqual(checkManifest(pages(MAX_PAGES_PER_BATCH)), pages(MAX_PAGES_PER_BATCH));
  assert.equal(webhookId('scan-1', 3), 'dt_scan-1_3');
});

test('refusals say what is wrong', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['malformed JSON', '{"v":1,', /not JSON/],
    ['an array', '[]', /not a JSON object/],
    [
      'another version',
      edited(pages(), (m) => {
        m.v = 2;
      }),
      /meta\.v must be 1/,
    ],
    [
      'no scan_uuid',
      edited(pages(), (m) => {
        delete m.scan_uuid;
      }),
      /meta\.scan_uuid/,
    ],
    [
      'a scan_uuid too long',
      edited(pages(), (m) => {
        m.scan_uuid = 'x'.repeat(65);
      }),
      /meta\.scan_uuid/,
    ],
    [
      'no client_uuid',
      edited(end(), (m) => {
        delete m.client_uuid;
      }),
      /meta\.client_uuid/,
    ],
    [
      'batch 0',
      edited(pages(), (m) => {
        m.batch = 0;
      }),
      /meta\.batch must be an integer from 1/,
    ],
    [
      'batch 1.5',
      edited(pages(), (m) => {
        m.batch = 1.5;
      }),
      /meta\.batch/,
    ],
    [
      'batch as text',
      edited(pages(), (m) => {
        m.batch = '3';
      }),
      /meta\.batch/,
    ],
    [
      'an unknown type',
      edited(pages(), (m) => {
        m.type = 'page';
      }),
      /meta\.type must be "pages" or "scan.end"/,
    ],
    [
      'no pages',
      edited(pages(), (m) => {
        m.pages = [];
      }),
      /1 to 10 pages/,
    ],
    ['too many pages', JSON.stringify(pages(MAX_PAGES_PER_BATCH + 1)), /1 to 10 pages/],
    [
      'a part named twice',
      edited(pages(), (m) => {
        m.pages[1].part = 'p1';
      }),
      /meta\.pages\[1\]\.part: p1 is named twice/,
    ],
    [
      'a part named meta',
      edited(pages(), (m) => {
        m.pages[0].part = 'meta';
      }),
      /meta\.pages\[0\]\.part must be p1 … p10/,
    ],
    [
      'a part p11',
      edited(pages(), (m) => {
        m.pages[0].part = 'p11';
      }),
      /part must be p1 … p10/,
    ],
    [
      'a page not an object',
      edited(pages(), (m) => {
        m.pages[1] = 'p2';
      }),
      /meta\.pages\[1\] must be an object/,
    ],
    [
      'item_id 0',
      edited(pages(), (m) => {
        m.pages[0].item_id = 0;
      }),
      /meta\.pages\[0\]\.item_id must be a positive integer/,
    ],
    [
      'no width',
      edited(pages(), (m) => {
        delete m.pages[0].width;
      }),
      /meta\.pages\[0\]\.width must be a positive integer/,
    ],
    [
      'dpi 0',
      edited(pages(), (m) => {
        m.pages[1].dpi = 0;
      }),
      /meta\.pages\[1\]\.dpi/,
    ],
    [
      'an empty page',
      edited(pages(), (m) => {
        m.pages[0].bytes = 0;
      }),
      /\.bytes must be a positive integer/,
    ],
    [
      'front as 1',
      edited(pages(), (m) => {
        m.pages[0].front = 1;
      }),
      /\.front must be true or false/,
    ],
    [
      'a short sha256',
      edited(pages(), (m) => {
        m.pages[0].sha256 = 'ab'.repeat(31);
      }),
      /\.sha256 must be 64 lowercase hex digits/,
    ],
    [
      'an uppercase sha256',
      edited(pages(), (m) => {
        m.pages[0].sha256 = 'AB'.repeat(32);
      }),
      /\.sha256/,
    ],
    [
      'no content_type',
      edited(pages(), (m) => {
        delete m.pages[0].content_type;
      }),
      /\.content_type must be image\/jpeg/,
    ],
    [
      'a cipher on a JPEG',
      edited(pages(), (m) => {
        m.pages[0].cipher = cipher;
      }),
      /\.cipher is for an encrypted page only/,
    ],
    [
      'an encrypted page where none is taken',
      edited(pages(), (m) => {
        Object.assign(m.pages[0], { content_type: 'application/octet-stream', cipher });
      }),
      /content_type must be image\/jpeg \(this receiver takes no encrypted pages\)/,
    ],
    [
      'an end without totals',
      edited(end(), (m) => {
        delete m.totals;
      }),
      /meta\.totals must hold batches and pages/,
    ],
    [
      'an end with a negative error_code',
      edited(end(), (m) => {
        m.error_code = -1;
      }),
      /meta\.error_code/,
    ],
  ];
  for (const [what, text, message] of cases) {
    const r = parseManifest(text);
    assert.equal(typeof r, 'string', `${what}: taken`);
    assert.match(r as string, message, what);
  }
});

test('encrypted pages where the receiver takes them: application/octet-stream with a cipher', () => {
  const encrypted = edited(pages(), (m) => {
    Object.assign(m.pages[1], { content_type: 'application/octet-stream', cipher });
  });
  const m = parseManifest(encrypted, { encrypted: true }) as PagesManifest;
  assert.equal(typeof m, 'object', String(m));
  assert.deepEqual(
    m.pages.map((p) => [p.content_type, p.cipher]),
    [
      ['image/jpeg', undefined],
      ['application/octet-stream', cipher],
    ],
  );
  assert.ok(!('cipher' in m.pages[0]!), 'no cipher key on a JPEG page');
  const refusals: Array<[string, (p: Record<string, unknown>) => void, RegExp]> = [
    [
      'no cipher',
      (p) => {
        p.content_type = 'application/octet-stream';
      },
      /\.cipher must be 160 lowercase hex digits/,
    ],
    [
      'a short cipher',
      (p) => {
        Object.assign(p, { content_type: 'application/octet-stream', cipher: 'cd'.repeat(79) });
      },
      /\.cipher must be 160/,
    ],
    [
      'another type',
      (p) => {
        p.content_type = 'image/png';
      },
      /\.content_type must be image\/jpeg, or application\/octet-stream for an encrypted page/,
    ],
  ];
  for (const [what, edit, message] of refusals)
    assert.match(
      parseManifest(
        edited(pages(), (m) => edit(m.pages[0])),
        { encrypted: true },
      ) as string,
      message,
      what,
    );
});

test('options.direct_page_size cannot ask for more pages than a batch holds', () => {
  assert.equal((ScanOptions.properties.direct_page_size as { maximum?: number }).maximum, MAX_PAGES_PER_BATCH);
});
