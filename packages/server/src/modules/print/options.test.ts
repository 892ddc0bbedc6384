// Print options resolved against a printer capability (options.ts): defaults, refusals that
// name the option and what is allowed, page_ranges syntax.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type PrinterCapability } from '@boxhub/protocol';
import { parsePageRanges, resolvePrintOptions } from './options.ts';

const type = (media_type: string, o: Partial<PrinterCapability['media_sizes'][number]['media_types'][number]> = {}) =>
  ({
    media_type,
    duplex: ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE'],
    borderless: false,
    quality: ['SVC_QU_DRAFT', 'SVC_QU_NORMAL', 'SVC_QU_HIGH'],
    input_slot: ['SVC_IS_AUTO', 'SVC_IS_CASS1'],
    ...o,
  }) as PrinterCapability['media_sizes'][number]['media_types'][number];

const cap: PrinterCapability = {
  make: 'Acme',
  model: 'Inkjet 1',
  support_strict: true,
  color_mode: ['SVC_CM_MONO', 'SVC_CM_COLOR'],
  media_sizes: [
    {
      media_size: 'SVC_MS_A4',
      media_types: [type('SVC_MT_PLAIN'), type('SVC_MT_PHOTO', { duplex: ['SVC_DP_NONE'], quality: ['SVC_QU_HIGH'] })],
    },
    {
      media_size: 'SVC_MS_4X6',
      media_types: [
        type('SVC_MT_PHOTO', {
          duplex: ['SVC_DP_NONE'],
          borderless: true,
          quality: ['SVC_QU_HIGH'],
          input_slot: ['SVC_IS_PHOTO'],
        }),
      ],
    },
    {
      media_size: 'SVC_MS_ENV_DL',
      media_types: [{ media_type: 'SVC_MT_ENVELOPE', duplex: ['SVC_DP_NONE'], borderless: false, quality: [] }],
    },
  ],
};

function refused(f: () => unknown, key: ApiError['key'], msg: RegExp): void {
  assert.throws(f, (e: unknown) => e instanceof ApiError && e.key === key && msg.test(e.message), `${key} ${msg}`);
}

test('the spec\'s defaults, and the documented ones where it says "not shown"', () => {
  assert.deepEqual(resolvePrintOptions({}, cap), {
    media_size: 'SVC_MS_A4',
    media_type: 'SVC_MT_PLAIN',
    borderless: false,
    copies: 1,
    strict: false,
    collate: true,
    reverse: true,
    color_mode: 'SVC_CM_COLOR',
    quality: 'SVC_QU_NORMAL',
    duplex: 'SVC_DP_NONE',
  });
  // Photo on A4 lists only high quality: no quality is chosen for the application.
  const photo = resolvePrintOptions({ media_type: 'SVC_MT_PHOTO' }, cap);
  assert.equal(photo.quality, undefined);
  // A mono printer: mono.
  assert.equal(resolvePrintOptions({}, { ...cap, color_mode: ['SVC_CM_MONO'] }).color_mode, 'SVC_CM_MONO');
  // Envelopes: no quality list, no input slots.
  assert.deepEqual(
    resolvePrintOptions(
      { media_size: 'SVC_MS_ENV_DL', media_type: 'SVC_MT_ENVELOPE', reverse: false, collate: false, number: 3 },
      cap,
    ),
    {
      media_size: 'SVC_MS_ENV_DL',
      media_type: 'SVC_MT_ENVELOPE',
      borderless: false,
      copies: 3,
      strict: false,
      collate: false,
      reverse: false,
      color_mode: 'SVC_CM_COLOR',
      duplex: 'SVC_DP_NONE',
    },
  );
});

test('every option given is kept, page_ranges parsed', () => {
  assert.deepEqual(
    resolvePrintOptions(
      {
        media_size: 'SVC_MS_4X6',
        media_type: 'SVC_MT_PHOTO',
        borderless: true,
        input_slot: 'SVC_IS_PHOTO',
        quality: 'SVC_QU_HIGH',
        color_mode: 'SVC_CM_MONO',
        duplex: 'SVC_DP_NONE',
        number: 2,
        collate: false,
        reverse: false,
        strict: true,
        page_ranges: '1',
      },
      cap,
    ),
    {
      media_size: 'SVC_MS_4X6',
      media_type: 'SVC_MT_PHOTO',
      borderless: true,
      copies: 2,
      strict: true,
      collate: false,
      reverse: false,
      color_mode: 'SVC_CM_MONO',
      quality: 'SVC_QU_HIGH',
      duplex: 'SVC_DP_NONE',
      input_slot: 'SVC_IS_PHOTO',
      page_ranges: [{ from: 1, to: 1 }],
    },
  );
  assert.equal(
    resolvePrintOptions({ page_ranges: ' ' }, cap).page_ranges,
    undefined,
    'an empty page_ranges is every page',
  );
});

test('an option the printer lacks is refused with its name and the allowed values', () => {
  refused(
    () => resolvePrintOptions({ media_size: 'SVC_MS_A3' }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /^options\.media_size SVC_MS_A3 is not supported by this printer; allowed: SVC_MS_A4, SVC_MS_4X6, SVC_MS_ENV_DL$/,
  );
  refused(
    () => resolvePrintOptions({ media_size: 'SVC_MS_4X6' }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /^options\.media_type SVC_MT_PLAIN is not supported by this printer for SVC_MS_4X6; allowed: SVC_MT_PHOTO$/,
  );
  refused(
    () => resolvePrintOptions({ borderless: true }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /^options\.borderless is not supported by this printer for SVC_MS_A4 \/ SVC_MT_PLAIN; borderless is possible on: SVC_MS_4X6 \/ SVC_MT_PHOTO$/,
  );
  refused(
    () => resolvePrintOptions({ media_type: 'SVC_MT_PHOTO', duplex: 'SVC_DP_NOTUMBLE' }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /^options\.duplex SVC_DP_NOTUMBLE .* for SVC_MS_A4 \/ SVC_MT_PHOTO; allowed: SVC_DP_NONE$/,
  );
  refused(
    () =>
      resolvePrintOptions({ quality: 'SVC_QU_HIGH', media_size: 'SVC_MS_ENV_DL', media_type: 'SVC_MT_ENVELOPE' }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /quality SVC_QU_HIGH .*; allowed: none$/,
  );
  refused(
    () => resolvePrintOptions({ input_slot: 'SVC_IS_REAR' }, cap),
    'PRINT_OPTION_UNSUPPORTED',
    /input_slot SVC_IS_REAR .*; allowed: SVC_IS_AUTO, SVC_IS_CASS1$/,
  );
  refused(
    () => resolvePrintOptions({ color_mode: 'SVC_CM_COLOR' }, { ...cap, color_mode: ['SVC_CM_MONO'] }),
    'PRINT_OPTION_UNSUPPORTED',
    /color_mode SVC_CM_COLOR .*; allowed: SVC_CM_MONO$/,
  );
  refused(
    () => resolvePrintOptions({ strict: true }, { ...cap, support_strict: false }),
    'PRINT_OPTION_UNSUPPORTED',
    /^options\.strict is not supported by this printer: it does not report the sides it printed/,
  );
  refused(() => resolvePrintOptions({ number: 1000 }, cap), 'INVALID_PARAMETER', /options\.number 1000 .*1 to 999/);
  refused(() => resolvePrintOptions({}, null), 'PRINTER_UNSUPPORTED', /cannot drive this printer/);
  const e = (() => {
    try {
      resolvePrintOptions({ input_slot: 'SVC_IS_REAR' }, cap);
    } catch (x) {
      return x as ApiError;
    }
    return undefined;
  })();
  assert.deepEqual(
    e?.data,
    { option: 'input_slot', value: 'SVC_IS_REAR', allowed: ['SVC_IS_AUTO', 'SVC_IS_CASS1'] },
    "the envelope's data says it too",
  );
});

test("page_ranges: the spec's forms, spaces, order kept; bad ones say why", () => {
  assert.deepEqual(parsePageRanges('1,3,5'), [
    { from: 1, to: 1 },
    { from: 3, to: 3 },
    { from: 5, to: 5 },
  ]);
  assert.deepEqual(parsePageRanges('1-10'), [{ from: 1, to: 10 }]);
  assert.deepEqual(parsePageRanges('1-3,5,6-10'), [
    { from: 1, to: 3 },
    { from: 5, to: 5 },
    { from: 6, to: 10 },
  ]);
  assert.deepEqual(parsePageRanges(' 7 , 2 - 3 '), [
    { from: 7, to: 7 },
    { from: 2, to: 3 },
  ]);
  const bad: Array<[string, RegExp]> = [
    ['3-1', /3-1 runs backwards \(write 1-3\)/],
    ['0', /pages count from 1/],
    ['1-', /'1-' is not a page or a range/],
    ['1,,2', /'' is not a page or a range/],
    ['a', /'a' is not a page/],
    ['1.5', /'1.5' is not a page/],
    ['1234567', /'1234567' is not a page/],
    [Array.from({ length: 101 }, (_, i) => i + 1).join(','), /101 parts, at most 100/],
  ];
  for (const [text, re] of bad) refused(() => parsePageRanges(text), 'INVALID_PARAMETER', re);
});
