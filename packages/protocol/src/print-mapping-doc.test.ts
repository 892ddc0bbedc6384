// docs/printing.md "Mapping" and print-mapping.ts must say the same thing, and every constant
// must have exactly one row in the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from './constants.ts';
import {
  COLOR_MODE_MAP,
  DUPLEX_MAP,
  INPUT_SLOT_MAP,
  MEDIA_SIZE_MAP,
  MEDIA_TYPE_MAP,
  QUALITY_MAP,
} from './print-mapping.ts';

const doc = readFileSync(new URL('../../../docs/printing.md', import.meta.url), 'utf8');
const start = doc.indexOf('## Mapping');
const section = doc.slice(start, doc.indexOf('\n## ', start + 3));
/** constant → the backticked values of its IPP cell, and that cell. */
const rows = new Map(
  [...section.matchAll(/^\| (SVC_\w+) \| ([^|]*) \|/gm)].map((m) => [
    m[1]!,
    { ticks: [...m[2]!.matchAll(/`([^`]+)`/g)].map((t) => t[1]!), cell: m[2]! },
  ]),
);

test('every constant is in one table row and in the mapping, nothing else', () => {
  const constants = [...ColorMode, ...MediaSize, ...MediaType, ...Duplex, ...Quality, ...InputSlot].sort();
  assert.deepEqual([...rows.keys()].sort(), constants);
  const mapped = [
    ...MEDIA_SIZE_MAP,
    ...MEDIA_TYPE_MAP,
    ...INPUT_SLOT_MAP,
    ...COLOR_MODE_MAP,
    ...DUPLEX_MAP,
    ...QUALITY_MAP,
  ]
    .map((r) => r.svc)
    .sort();
  assert.deepEqual(mapped, constants);
});

test('each row gives the IPP values of the mapping, in its order', () => {
  for (const m of MEDIA_SIZE_MAP) {
    const r = rows.get(m.svc)!;
    assert.deepEqual(r.ticks, [m.pwg], m.svc);
    assert.match(r.cell, new RegExp(`\\b${m.x} × ${m.y}\\b`), `${m.svc} dimensions`);
  }
  for (const m of [...MEDIA_TYPE_MAP, ...INPUT_SLOT_MAP, ...COLOR_MODE_MAP, ...DUPLEX_MAP])
    assert.deepEqual(rows.get(m.svc)!.ticks, [...m.ipp], m.svc);
  for (const m of QUALITY_MAP) assert.deepEqual(rows.get(m.svc)!.ticks, [String(m.ipp)], m.svc);
});
