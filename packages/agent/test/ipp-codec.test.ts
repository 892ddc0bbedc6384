// IPP codec on bytes: a Get-Printer-Attributes answer captured from a real ippeveprinter
// (CUPS 2.4, Debian 12), hand-built messages for every value tag, and malformed input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeMessage } from '../src/drivers/ipp/decode.ts';
import { encodeMessage } from '../src/drivers/ipp/encode.ts';
import { IppDecodeError } from '../src/drivers/ipp/errors.ts';
import { IppAttributes } from '../src/drivers/ipp/attributes.ts';
import type { IppMessage } from '../src/drivers/ipp/model.ts';

const fixture = readFileSync(new URL('./fixtures/ippeveprinter-get-printer-attributes.bin', import.meta.url));

test('decodes a real ippeveprinter Get-Printer-Attributes answer', () => {
  const msg = decodeMessage(fixture);
  assert.deepEqual(msg.version, [2, 0]);
  assert.equal(msg.code, 0, 'successful-ok');
  assert.equal(msg.requestId, 1);
  assert.deepEqual(
    msg.groups.map((g) => g.tag),
    ['operation', 'printer'],
  );
  assert.equal(msg.data, undefined);
  const op = IppAttributes.of(msg, 'operation');
  assert.equal(op.values('attributes-charset')[0]?.tag, 'charset');
  assert.equal(op.string('attributes-natural-language'), 'en');

  const p = IppAttributes.of(msg, 'printer');
  assert.equal(p.list.length, 102);
  assert.equal(p.string('printer-make-and-model'), 'Example Printer');
  assert.equal(p.integer('printer-state'), 3);
  assert.equal(p.values('printer-state')[0]?.tag, 'enum');
  assert.deepEqual(p.strings('printer-state-reasons'), ['none']);
  assert.equal(p.boolean('color-supported'), true);
  assert.deepEqual(p.ranges('copies-supported'), [{ lower: 1, upper: 999 }]);
  assert.deepEqual(p.resolutions('printer-resolution-supported'), [{ x: 600, y: 600, units: 'dpi' }]);
  assert.deepEqual(p.integers('print-quality-supported'), [3, 4, 5]);
  assert.deepEqual(p.strings('sides-supported'), ['one-sided', 'two-sided-long-edge', 'two-sided-short-edge']);
  assert.deepEqual(p.strings('document-format-supported'), [
    'application/octet-stream',
    'application/pdf',
    'image/jpeg',
  ]);
  assert.equal(p.values('document-format-supported')[0]?.tag, 'mimeMediaType');
  assert.deepEqual(p.strings('media-source-supported'), ['auto', 'main', 'photo']);
  assert.equal(p.outOfBand('printer-geo-location'), 'unknown');
  assert.ok(p.dates('printer-current-time')[0] instanceof Date);
  assert.equal(
    p.octetStrings('printer-supply')[1],
    'index=2;class=supplyThatIsConsumed;type=ink;unit=percent;maxcapacity=100;level=75;colorantname=black;',
  );
  assert.equal(p.values('printer-name')[0]?.tag, 'nameWithoutLanguage');
  assert.equal(p.values('reference-uri-schemes-supported')[0]?.tag, 'uriScheme');

  // 1setOf collection with a nested media-size collection (PWG 5100.7 §6.6).
  const db = p.collections('media-col-database');
  assert.equal(db.length, 11);
  const a4 = db.find((c) => c.string('media-size-name') === 'iso_a4_210x297mm');
  assert.ok(a4);
  assert.equal(a4.collection('media-size')?.integer('x-dimension'), 21000);
  assert.equal(a4.collection('media-size')?.integer('y-dimension'), 29700);
  assert.equal(a4.integer('media-left-margin'), 340);
  const borderless = db.filter((c) =>
    ['media-top-margin', 'media-bottom-margin', 'media-left-margin', 'media-right-margin'].every(
      (m) => c.integer(m) === 0,
    ),
  );
  assert.equal(borderless.length, 5);
  assert.ok(borderless.every((c) => c.string('media-source') === 'photo'));
  assert.equal(p.collection('media-col-default')?.string('media-type'), 'stationery');
});

test('re-encoding the captured answer gives the same bytes (round trip)', () => {
  assert.ok(Buffer.from(encodeMessage(decodeMessage(fixture))).equals(fixture));
});

const sample: IppMessage = {
  version: [1, 1],
  code: 0x0002,
  requestId: 0x01020304,
  groups: [
    {
      tag: 'operation',
      attributes: [
        { name: 'attributes-charset', values: [{ tag: 'charset', value: 'utf-8' }] },
        { name: 'attributes-natural-language', values: [{ tag: 'naturalLanguage', value: 'en' }] },
        { name: 'printer-uri', values: [{ tag: 'uri', value: 'ipp://localhost/ipp/print' }] },
        { name: 'job-name', values: [{ tag: 'nameWithLanguage', value: 'Übung', lang: 'de' }] },
        { name: 'message', values: [{ tag: 'textWithLanguage', value: 'héllo', lang: 'fr-ca' }] },
        { name: 'document-format', values: [{ tag: 'mimeMediaType', value: 'application/pdf' }] },
      ],
    },
    {
      tag: 'job',
      attributes: [
        { name: 'copies', values: [{ tag: 'integer', value: -2147483648 }] },
        { name: 'print-quality', values: [{ tag: 'enum', value: 5 }] },
        { name: 'ipp-attribute-fidelity', values: [{ tag: 'boolean', value: false }] },
        {
          name: 'page-ranges',
          values: [
            { tag: 'rangeOfInteger', value: { lower: 1, upper: 3 } },
            { tag: 'rangeOfInteger', value: { lower: 5, upper: 5 } },
          ],
        },
        { name: 'printer-resolution', values: [{ tag: 'resolution', value: { x: 300, y: 600, units: 'dpcm' } }] },
        {
          name: 'job-hold-until-time',
          values: [{ tag: 'dateTime', value: new Date('2024-02-29T23:59:58.700Z'), offsetMinutes: -330 }],
        },
        { name: 'opaque', values: [{ tag: 'octetString', value: Uint8Array.from([0, 255, 3]) }] },
        {
          name: 'media',
          values: [
            { tag: 'keyword', value: 'iso_a4_210x297mm' },
            { tag: 'nameWithoutLanguage', value: 'Custom' },
          ],
        },
        { name: 'job-sheets', values: [{ tag: 'no-value' }] },
        { name: 'x-vendor', values: [{ tag: 'unknownTag', code: 0x4f, value: Uint8Array.from([1, 2]) }] },
        {
          name: 'media-col',
          values: [
            {
              tag: 'collection',
              value: [
                {
                  name: 'media-size',
                  values: [
                    {
                      tag: 'collection',
                      value: [
                        { name: 'x-dimension', values: [{ tag: 'integer', value: 21000 }] },
                        { name: 'y-dimension', values: [{ tag: 'integer', value: 29700 }] },
                      ],
                    },
                  ],
                },
                { name: 'media-source', values: [{ tag: 'keyword', value: 'main' }] },
                {
                  name: 'media-type-list',
                  values: [
                    { tag: 'keyword', value: 'a' },
                    { tag: 'keyword', value: 'b' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
    {
      tag: 'unsupported',
      attributes: [
        { name: 'sides', values: [{ tag: 'unsupported' }] },
        { name: 'x', values: [{ tag: 'unknown' }] },
      ],
    },
  ],
  data: Uint8Array.from(Buffer.from('%PDF-1.4\n')),
};

test('every value tag survives encode → decode', () => {
  const bytes = encodeMessage(sample);
  assert.deepEqual(decodeMessage(bytes), sample);
  assert.ok(Buffer.from(encodeMessage(decodeMessage(bytes))).equals(bytes));
});

test('encodes the header and a value exactly as RFC 8010 §3.1 lays them out', () => {
  const bytes = encodeMessage({
    version: [2, 0],
    code: 0x000b,
    requestId: 7,
    groups: [
      {
        tag: 'operation',
        attributes: [
          {
            name: 'a',
            values: [
              { tag: 'integer', value: 1 },
              { tag: 'integer', value: 2 },
            ],
          },
        ],
      },
    ],
  });
  assert.deepEqual(
    [...bytes],
    [
      0x02,
      0x00,
      0x00,
      0x0b,
      0,
      0,
      0,
      7,
      0x01,
      0x21,
      0,
      1,
      0x61,
      0,
      4,
      0,
      0,
      0,
      1,
      0x21,
      0,
      0,
      0,
      4,
      0,
      0,
      0,
      2, // additional value: empty name
      0x03,
    ],
  );
  // A collection: begCollection, memberAttrName + value with empty names, endCollection (§3.1.6).
  const col = encodeMessage({
    version: [2, 0],
    code: 0,
    requestId: 1,
    groups: [
      {
        tag: 'job',
        attributes: [
          {
            name: 'c',
            values: [{ tag: 'collection', value: [{ name: 'k', values: [{ tag: 'keyword', value: 'v' }] }] }],
          },
        ],
      },
    ],
  });
  assert.deepEqual(
    [...col.subarray(8)],
    [0x02, 0x34, 0, 1, 0x63, 0, 0, 0x4a, 0, 0, 0, 1, 0x6b, 0x44, 0, 0, 0, 1, 0x76, 0x37, 0, 0, 0, 0, 0x03],
  );
});

test('every truncation of the captured answer is a clear IppDecodeError', () => {
  for (let n = 0; n < fixture.length; n++) {
    assert.throws(
      () => decodeMessage(fixture.subarray(0, n)),
      (e: unknown) => e instanceof IppDecodeError && /truncated|not closed/.test(e.message),
      `prefix of ${n} bytes`,
    );
  }
});

test('malformed input is rejected with IppDecodeError, never another error or a hang', () => {
  const bad: Array<[string, number[], RegExp]> = [
    ['bad version', [9, 9, 0, 0, 0, 0, 0, 1, 3], /unsupported IPP version/],
    ['value before a group', [2, 0, 0, 0, 0, 0, 0, 1, 0x21, 0, 1, 0x61, 0, 4, 0, 0, 0, 1, 3], /group delimiter/],
    [
      'integer of 3 bytes',
      [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x21, 0, 1, 0x61, 0, 3, 0, 0, 1, 3],
      /integer value must be 4 octets/,
    ],
    ['additional value first', [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x21, 0, 0, 0, 4, 0, 0, 0, 1, 3], /additional value/],
    ['endCollection outside', [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x37, 0, 0, 0, 0, 3], /outside a collection/],
    ['unclosed collection', [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x34, 0, 1, 0x63, 0, 0, 3], /not closed/],
    [
      'value before member name',
      [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x34, 0, 1, 0x63, 0, 0, 0x44, 0, 0, 0, 1, 0x76, 0x37, 0, 0, 0, 0, 3],
      /before any memberAttrName/,
    ],
    ['length past end', [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x44, 0xff, 0xff], /truncated/],
    [
      'bad dateTime sign',
      [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x31, 0, 1, 0x64, 0, 11, 7, 232, 1, 1, 0, 0, 0, 0, 0x3f, 0, 0, 3],
      /direction/,
    ],
    [
      'bad resolution units',
      [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x32, 0, 1, 0x72, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 9, 3],
      /units/,
    ],
    [
      'text with bad inner length',
      [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x35, 0, 1, 0x74, 0, 3, 0, 9, 0x65, 3],
      /bad textWithLanguage/,
    ],
  ];
  for (const [what, bytes, re] of bad) {
    assert.throws(
      () => decodeMessage(Uint8Array.from(bytes)),
      (e: unknown) => e instanceof IppDecodeError && re.test(e.message),
      what,
    );
  }
  // Collections nested without end must stop at the depth limit, not overflow the stack.
  const deep = [2, 0, 0, 0, 0, 0, 0, 1, 1, 0x34, 0, 1, 0x63, 0, 0];
  for (let i = 0; i < 10_000; i++) deep.push(0x4a, 0, 0, 0, 1, 0x6d, 0x34, 0, 0, 0, 0);
  assert.throws(() => decodeMessage(Uint8Array.from(deep)), /nested deeper than 16/);
});

test('random corruption of the captured answer decodes or throws IppDecodeError', () => {
  let seed = 42;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  let rejected = 0;
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.from(fixture);
    for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
    try {
      decodeMessage(b);
    } catch (e) {
      assert.ok(e instanceof IppDecodeError, `mutation ${i} threw ${String(e)}`);
      rejected++;
    }
  }
  assert.ok(rejected > 0);
});
