// docs/errors.md and the catalogs must say the same thing (conventions: errors as data, one
// catalog, checked against its documentation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { errorCatalog } from './errors.ts';
import { PRINTER_ERRORS } from './printer-errors.ts';
import { SCAN_ERRORS } from './scan-errors.ts';
import { PRINT_ERRORS } from './print-errors.ts';
import { RECOGNITION_ERRORS } from './recognition-errors.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const section = (title: string) => {
  const start = doc.indexOf(`## ${title}`);
  assert.ok(start >= 0, `docs/errors.md has a section "${title}"`);
  const end = doc.indexOf('\n## ', start + 3);
  return doc.slice(start, end < 0 ? undefined : end);
};
const rows = (text: string) => [...text.matchAll(/^\| (\d+) \| (\w+) \|/gm)].map((m) => [Number(m[1]), m[2]] as const);

test('every API status code is documented, and nothing else', () => {
  const documented = rows(section('API status codes'))
    .map(([c, k]) => `${c} ${k}`)
    .sort();
  const catalog = Object.entries(errorCatalog)
    .map(([k, v]) => `${v.code} ${k}`)
    .sort();
  assert.deepEqual(documented, catalog);
});

test('codes are unique', () => {
  const codes = Object.values(errorCatalog).map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
});

test('the spec codes keep their meaning', () => {
  assert.equal(errorCatalog.NO_CAPABILITY.code, 20005);
  assert.equal(errorCatalog.DEVICE_NOT_FOUND.code, 30002);
  assert.equal(errorCatalog.DEVICE_ALREADY_BOUND.code, 30003);
  assert.equal(errorCatalog.SCAN_EXISTS.code, 30204);
  assert.equal(errorCatalog.PRINTER_NOT_CONNECTED.code, 30301);
  assert.equal(errorCatalog.PRINTER_UNSUPPORTED.code, 30302);
});

test('every printer error code is documented, and nothing else', () => {
  const documented = rows(section('Printer error codes'))
    .map(([c, n]) => `${c} ${n}`)
    .sort();
  assert.deepEqual(documented, PRINTER_ERRORS.map((e) => `${e.code} ${e.name}`).sort());
});

test('every scan error code is documented, and nothing else', () => {
  const documented = rows(section('Scan error codes'))
    .map(([c, n]) => `${c} ${n}`)
    .sort();
  assert.deepEqual(documented, SCAN_ERRORS.map((e) => `${e.code} ${e.name}`).sort());
});

test('every print error code is documented, and nothing else', () => {
  const documented = rows(section('Print error codes'))
    .map(([c, n]) => `${c} ${n}`)
    .sort();
  assert.deepEqual(documented, PRINT_ERRORS.map((e) => `${e.code} ${e.name}`).sort());
  assert.equal(new Set(PRINT_ERRORS.map((e) => e.code)).size, PRINT_ERRORS.length);
});

test('every recognition error code is documented, and nothing else', () => {
  const documented = [...section('Recognition module error codes').matchAll(/^\| (\d+) \| [^|]+ \|$/gm)]
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  assert.deepEqual(
    documented,
    Object.values(RECOGNITION_ERRORS).sort((a, b) => a - b),
  );
});
