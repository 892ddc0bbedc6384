// Capability tree and job plan from IPP attributes (pure): a captured ippeveprinter answer and
// constructed printers (no media-col-database, no PDF, vendor keywords).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseJson, PrinterCapability, type PrintJobOptions } from '@boxhub/protocol';
import { MEDIA_SIZE_MAP, mediaSizeFor } from '@boxhub/protocol/print-mapping.ts';
import { decodeMessage } from '../src/drivers/ipp/decode.ts';
import {
  boolean,
  collection,
  enumAttr,
  integer,
  IppAttributes,
  keyword,
  mimeMediaType,
  rangeOfInteger,
} from '../src/drivers/ipp/attributes.ts';
import { capabilityFrom, pwgNameSize } from '../src/drivers/ipp/capability.ts';
import { isSupported } from '../src/drivers/ipp/printer-status.ts';
import { planIppJob } from '../src/drivers/ipp/job-plan.ts';
import { PrintRejectedError } from '../src/drivers/types.ts';
import type { IppAttribute } from '../src/drivers/ipp/model.ts';

const captured = IppAttributes.of(
  decodeMessage(readFileSync(new URL('./fixtures/ippeveprinter-get-printer-attributes.bin', import.meta.url))),
  'printer',
);
const mm = { make: 'Acme', model: 'Laser 1' };

const size = (x: number, y: number) => collection('media-size', [integer('x-dimension', x), integer('y-dimension', y)]);
const margins = (v: number) => [
  integer('media-top-margin', v),
  integer('media-bottom-margin', v),
  integer('media-left-margin', v),
  integer('media-right-margin', v),
];

/** A laser without media-col-database: sizes only as names. */
const laser: IppAttribute[] = [
  mimeMediaType('document-format-supported', 'application/pdf', 'image/pwg-raster'),
  keyword('media-col-supported', 'media-size', 'media-source', 'media-type'),
  keyword(
    'media-supported',
    'iso_a4_210x297mm',
    'na_letter_8.5x11in',
    'iso_a5_148x210mm',
    'custom_min_76.2x127mm',
    'com.acme_odd_123x456mm',
  ),
  keyword('media-type-supported', 'stationery', 'com.acme-thick'),
  keyword('media-source-supported', 'auto', 'tray-1', 'tray-2', 'manual', 'large-capacity'),
  ...['top', 'bottom', 'left', 'right'].map((s) => integer(`media-${s}-margin-supported`, 423)),
  keyword('sides-supported', 'one-sided', 'two-sided-long-edge'),
  enumAttr('print-quality-supported', 4),
  boolean('color-supported', false),
  rangeOfInteger('copies-supported', { lower: 1, upper: 1 }),
];

const opts = (o: Partial<PrintJobOptions> = {}): PrintJobOptions => ({
  media_size: 'SVC_MS_A4',
  media_type: 'SVC_MT_PLAIN',
  borderless: false,
  copies: 1,
  collate: true,
  reverse: false,
  strict: false,
  ...o,
});

test('the mapping table names each size once, and sizes match either orientation within 0.5 mm', () => {
  assert.equal(new Set(MEDIA_SIZE_MAP.map((m) => m.svc)).size, MEDIA_SIZE_MAP.length);
  for (const m of MEDIA_SIZE_MAP) {
    assert.equal(mediaSizeFor(m.x, m.y)?.svc, m.svc);
    assert.equal(mediaSizeFor(m.y + 40, m.x - 40)?.svc, m.svc, `${m.svc} landscape, 0.4 mm off`);
    assert.deepEqual(pwgNameSize(m.pwg), { x: m.x, y: m.y }, `${m.pwg} describes its own size`);
  }
  assert.equal(mediaSizeFor(21000 + 60, 29700), undefined, '0.6 mm off is another size');
});

test('captured ippeveprinter attributes give a tree the schema accepts', () => {
  const c = capabilityFrom(captured, mm, true);
  assert.ok(c);
  assert.deepEqual(
    parseJson(PrinterCapability, JSON.stringify(c)),
    { ok: true, value: c },
    'the schema the box link checks it with',
  );
  const dl = c.media_sizes.find((s) => s.media_size === 'SVC_MS_ENV_DL')!;
  assert.deepEqual(dl.media_types[0]!.input_slot, ['SVC_IS_BYPASS']);
});

test('a printer without media-col-database: sizes from media-supported, types and slots for every size, margins never 0', () => {
  const c = capabilityFrom(new IppAttributes(laser), mm, false)!;
  assert.deepEqual(c, {
    make: 'Acme',
    model: 'Laser 1',
    support_strict: false,
    color_mode: ['SVC_CM_MONO'],
    media_sizes: ['SVC_MS_A4', 'SVC_MS_A5', 'SVC_MS_LETTER'].map((media_size) => ({
      media_size,
      media_types: [
        {
          media_type: 'SVC_MT_PLAIN',
          duplex: ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE'],
          borderless: false,
          quality: ['SVC_QU_NORMAL'],
          // tray-1 is CASS1, tray-2 CASS2; large-capacity has no constant: left out.
          input_slot: ['SVC_IS_AUTO', 'SVC_IS_CASS1', 'SVC_IS_CASS2', 'SVC_IS_MANUAL'],
        },
      ],
    })),
  });
  assert.ok(parseJson(PrinterCapability, JSON.stringify(c)).ok);
});

test('a printer without media-col: sizes by name, sent as `media`, nothing else about the media can be asked', () => {
  const a = new IppAttributes(laser.filter((x) => x.name !== 'media-col-supported'));
  const c = capabilityFrom(a, mm, false)!;
  assert.deepEqual(
    c.media_sizes.map((s) => s.media_size),
    ['SVC_MS_A4', 'SVC_MS_A5', 'SVC_MS_LETTER'],
  );
  assert.deepEqual(c.media_sizes[0]!.media_types, [
    {
      media_type: 'SVC_MT_PLAIN',
      duplex: ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE'],
      borderless: false,
      quality: ['SVC_QU_NORMAL'],
    },
  ]);
  assert.deepEqual(planIppJob(a, opts({ media_size: 'SVC_MS_LETTER' })).template, { media: 'na_letter_8.5x11in' });
  assert.throws(
    () => planIppJob(a, opts({ input_slot: 'SVC_IS_AUTO' })),
    /options\.input_slot SVC_IS_AUTO .*allowed: none$/,
  );
});

test('without the database, media-size-supported wins over names, and zero margins everywhere mean borderless everywhere', () => {
  const a = new IppAttributes([
    mimeMediaType('document-format-supported', 'application/pdf'),
    keyword(
      'media-col-supported',
      'media-size',
      'media-top-margin',
      'media-bottom-margin',
      'media-left-margin',
      'media-right-margin',
    ),
    collection(
      'media-size-supported',
      [integer('x-dimension', 10160), integer('y-dimension', 15240)],
      [integer('x-dimension', 21000), integer('y-dimension', 29700)],
    ),
    keyword('media-supported', 'na_letter_8.5x11in'),
    ...['top', 'bottom', 'left', 'right'].map((s) => integer(`media-${s}-margin-supported`, 0, 300)),
  ]);
  const c = capabilityFrom(a, mm, true)!;
  assert.deepEqual(
    c.media_sizes.map((s) => s.media_size),
    ['SVC_MS_A4', 'SVC_MS_4X6'],
  );
  // No media-type-supported: the printer prints on what is loaded, offered as plain paper.
  assert.deepEqual(c.media_sizes[0]!.media_types, [
    { media_type: 'SVC_MT_PLAIN', duplex: ['SVC_DP_NONE'], borderless: true, quality: [] },
  ]);
  // Printing it sends no media-type, borderless margins 0, and fits within the 3 mm margins otherwise.
  const plan = planIppJob(a, opts({ media_size: 'SVC_MS_4X6', borderless: true }));
  assert.deepEqual(plan.template.mediaCol, {
    size: { x: 10160, y: 15240 },
    margins: { top: 0, bottom: 0, left: 0, right: 0 },
  });
  assert.ok(Math.abs(planIppJob(a, opts()).page.margins.left - (300 / 2540) * 72) < 1e-9);
});

test('per size, a constant prints with the first keyword of its list that size has', () => {
  const a = new IppAttributes([
    mimeMediaType('document-format-supported', 'application/pdf'),
    collection(
      'media-col-database',
      [
        size(21000, 29700),
        keyword('media-type', 'photographic-high-gloss'),
        keyword('media-source', 'tray-1'),
        ...margins(300),
      ],
      [size(21000, 29700), keyword('media-type', 'photographic-satin'), keyword('media-source', 'main'), ...margins(0)],
      [
        size(10160, 15240),
        keyword('media-type', 'photographic-glossy'),
        keyword('media-source', 'photo'),
        ...margins(0),
      ],
      [size(12345, 23456), keyword('media-type', 'stationery'), ...margins(300)],
    ),
    keyword(
      'media-type-supported',
      'photographic-high-gloss',
      'photographic-satin',
      'photographic-glossy',
      'stationery',
    ),
    keyword('print-color-mode-supported', 'process-monochrome', 'color'),
  ]);
  const c = capabilityFrom(a, mm, true)!;
  // 123.45 × 234.56 mm has no constant: left out.
  assert.deepEqual(
    c.media_sizes.map((s) => s.media_size),
    ['SVC_MS_A4', 'SVC_MS_4X6'],
  );
  assert.deepEqual(c.color_mode, ['SVC_CM_MONO', 'SVC_CM_COLOR']);
  // A4 photo is high-gloss (listed before satin), from tray-1 only, so not borderless.
  const a4 = c.media_sizes[0]!.media_types;
  assert.deepEqual(a4, [
    {
      media_type: 'SVC_MT_PHOTO',
      duplex: ['SVC_DP_NONE'],
      borderless: false,
      quality: [],
      input_slot: ['SVC_IS_CASS1'],
    },
  ]);
  const plan = planIppJob(
    a,
    opts({ media_type: 'SVC_MT_PHOTO', input_slot: 'SVC_IS_CASS1', color_mode: 'SVC_CM_MONO' }),
  );
  assert.deepEqual(plan.template, {
    mediaCol: { size: { x: 21000, y: 29700 }, type: 'photographic-high-gloss', source: 'tray-1' },
    printColorMode: 'process-monochrome',
  });
  // 4x6 photo is glossy and borderless from the photo tray.
  assert.deepEqual(c.media_sizes[1]!.media_types[0], {
    media_type: 'SVC_MT_PHOTO',
    duplex: ['SVC_DP_NONE'],
    borderless: true,
    quality: [],
    input_slot: ['SVC_IS_PHOTO'],
  });
});

test('a printer the box cannot drive (no PDF) has no capability and is not supported', () => {
  const a = new IppAttributes([
    mimeMediaType('document-format-supported', 'image/pwg-raster', 'image/urf'),
    keyword('ipp-features-supported', 'ipp-everywhere'),
    keyword('media-supported', 'iso_a4_210x297mm'),
  ]);
  assert.equal(capabilityFrom(a, mm, true), null);
  assert.equal(isSupported(a), false);
  assert.throws(
    () => planIppJob(a, opts()),
    (e: unknown) => e instanceof PrintRejectedError && /needs application\/pdf/.test(e.message),
  );
  // PDF but no size with a constant: nothing could be asked for either.
  assert.equal(
    capabilityFrom(
      new IppAttributes([
        mimeMediaType('document-format-supported', 'application/pdf'),
        keyword('media-supported', 'custom_100x100mm'),
      ]),
      mm,
      true,
    ),
    null,
  );
});

test('the box refuses what the printer does not list, naming the option and the allowed values', () => {
  const cases: Array<[Partial<PrintJobOptions>, RegExp]> = [
    [
      { media_size: 'SVC_MS_A3' },
      /options\.media_size SVC_MS_A3 is not supported by this printer; allowed: SVC_MS_A4, SVC_MS_A5, SVC_MS_A6, SVC_MS_LETTER/,
    ],
    [
      { input_slot: 'SVC_IS_REAR' },
      /options\.input_slot SVC_IS_REAR is not supported by this printer for SVC_MS_A4 \/ SVC_MT_PLAIN; allowed: SVC_IS_AUTO, SVC_IS_CASS1, SVC_IS_PHOTO$/,
    ],
    [{ borderless: true }, /options\.borderless is not supported by this printer for SVC_MS_A4 \/ SVC_MT_PLAIN/],
    [{ media_size: 'SVC_MS_A5', input_slot: 'SVC_IS_CASS1' }, /allowed: SVC_IS_BYPASS$/],
  ];
  for (const [o, re] of cases)
    assert.throws(
      () => planIppJob(captured, opts(o)),
      (e: unknown) => e instanceof PrintRejectedError && re.test(e.message),
      JSON.stringify(o),
    );
  const l = new IppAttributes(laser);
  assert.throws(
    () => planIppJob(l, opts({ duplex: 'SVC_DP_TUMBLE' })),
    /options\.duplex SVC_DP_TUMBLE .*allowed: SVC_DP_NONE, SVC_DP_NOTUMBLE/,
  );
  assert.throws(() => planIppJob(l, opts({ quality: 'SVC_QU_HIGH' })), /allowed: SVC_QU_NORMAL$/);
  assert.throws(() => planIppJob(l, opts({ color_mode: 'SVC_CM_COLOR' })), /allowed: SVC_CM_MONO$/);
  assert.throws(
    () => planIppJob(l, opts({ media_type: 'SVC_MT_PHOTO' })),
    /media_type SVC_MT_PHOTO .*allowed: SVC_MT_PLAIN$/,
  );
});

test('every option maps to its IPP attribute', () => {
  const plan = planIppJob(
    captured,
    opts({
      media_size: 'SVC_MS_4X6',
      media_type: 'SVC_MT_MATTE',
      borderless: true,
      input_slot: 'SVC_IS_PHOTO',
      duplex: 'SVC_DP_TUMBLE',
      quality: 'SVC_QU_DRAFT',
      color_mode: 'SVC_CM_COLOR',
    }),
  );
  assert.deepEqual(plan.template, {
    mediaCol: {
      size: { x: 10160, y: 15240 },
      type: 'photographic-matte',
      source: 'photo',
      margins: { top: 0, bottom: 0, left: 0, right: 0 },
    },
    sides: 'two-sided-short-edge',
    printColorMode: 'color',
    printQuality: 'draft',
  });
  assert.deepEqual(plan.page.margins, { top: 0, bottom: 0, left: 0, right: 0 });
  assert.deepEqual(plan.features.pages, {
    pageRanges: true,
    maxCopies: 999,
    collation: { collated: true, uncollated: true },
  });
  // A4 from the captured printer: its own margins (1.02 mm top, 11.68 mm bottom, 3.4 mm sides).
  const a4 = planIppJob(captured, opts());
  assert.deepEqual(a4.template, { mediaCol: { size: { x: 21000, y: 29700 }, type: 'stationery' } });
  assert.ok(Math.abs(a4.page.margins.bottom - (1168 / 2540) * 72) < 1e-9);
});
