// docs/printers-and-scanners.md, "Normalised state reasons", and the table in device-state.ts
// must say the same thing; and the mapping rules, row by row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { printerStateReasons, scannerStateReasons, STATE_REASON_NAMES, STATE_REASONS } from './device-state.ts';

const doc = readFileSync(new URL('../../../docs/printers-and-scanners.md', import.meta.url), 'utf8');
const start = doc.indexOf('## Normalised state reasons');
const section = doc.slice(start, doc.indexOf('\n## ', start + 3));
const cell = (s: string) => (s.trim() === '—' ? [] : [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));

test("the documented table is the code's table, row for row and in order", () => {
  const rows = [...section.matchAll(/^\| `(\w+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => ({
    name: m[1],
    meaning: m[2]!.trim(),
    ipp: cell(m[3]!),
    sane: cell(m[4]!),
    escl: cell(m[5]!),
  }));
  assert.deepEqual(
    rows,
    STATE_REASONS.map((r) => ({
      name: r.name,
      meaning: r.meaning,
      ipp: [...r.ipp],
      sane: [...r.sane],
      escl: [...r.escl],
    })),
  );
  assert.deepEqual(
    [...STATE_REASON_NAMES],
    STATE_REASONS.map((r) => r.name),
  );
});

test('printer reasons: any suffix for table keywords, ink or toner by kind, other errors, offline', () => {
  const p = (
    state_reasons: string[],
    more: { state?: 'idle' | 'processing' | 'stopped'; kind?: 'inkjet' | 'laser' | 'other' } = {},
  ) => printerStateReasons({ connected: true, state: 'idle', state_reasons, ...more });
  assert.deepEqual(p(['none']), []);
  assert.deepEqual(p(['media-empty-report']), ['media_empty']);
  assert.deepEqual(p(['media-jam-error', 'door-open-warning']), ['cover_open', 'media_jam']);
  assert.deepEqual(p(['marker-supply-low-warning'], { kind: 'inkjet' }), ['ink_low']);
  assert.deepEqual(p(['marker-supply-empty-error'], { kind: 'laser' }), ['toner_empty']);
  assert.deepEqual(p(['marker-supply-low-warning'], { kind: 'other' }), ['marker_supply_low']);
  assert.deepEqual(p(['toner-low-report', 'media-low-warning']), ['media_low', 'toner_low']);
  assert.deepEqual(p(['com.vendor-thing-error']), ['error']);
  assert.deepEqual(p(['com.vendor-thing-report']), [], 'a vendor report is no reason');
  assert.deepEqual(p([], { state: 'stopped' }), ['error']);
  assert.deepEqual(p(['paused'], { state: 'stopped' }), ['paused']);
  assert.deepEqual(printerStateReasons({ connected: false, state_reasons: ['media-empty-error'] }), ['offline']);
});

test('scanner reasons: SANE and eSCL words, error codes, an empty feeder is none', () => {
  const s = (state_reasons: string[], error_code = 0, state: 'idle' | 'stopped' = 'idle') =>
    scannerStateReasons({ connected: true, state, error_code, state_reasons });
  assert.deepEqual(s(['Idle', 'ScannerAdfEmpty']), []);
  assert.deepEqual(s(['Stopped', 'ScannerAdfMispick'], 2001, 'stopped'), ['media_jam']);
  assert.deepEqual(s(['ScannerAdfHatchOpen'], 2002, 'stopped'), ['cover_open']);
  assert.deepEqual(s(['SANE_STATUS_JAMMED'], 2001, 'stopped'), ['media_jam']);
  assert.deepEqual(s([], 2002, 'stopped'), ['cover_open'], 'the simulator says it by error_code');
  assert.deepEqual(s([], 2004), ['busy']);
  assert.deepEqual(s([], 0, 'stopped'), ['error']);
  assert.deepEqual(scannerStateReasons({ connected: false }), ['offline']);
});
