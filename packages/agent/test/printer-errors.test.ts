import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRINTER_ERRORS, PrinterError, printerErrorCode, splitReason } from '@boxhub/protocol/printer-errors.ts';

test('printer error codes are unique and named', () => {
  assert.equal(new Set(PRINTER_ERRORS.map((e) => e.code)).size, PRINTER_ERRORS.length);
  assert.equal(PrinterError.none, 0);
});

test('printer-state-reasons map to printer error codes', () => {
  const cases: Array<[Parameters<typeof printerErrorCode>[0], string[], number]> = [
    ['idle', ['none'], PrinterError.none],
    ['idle', [], PrinterError.none],
    ['idle', ['marker-supply-low-warning', 'toner-low-report'], PrinterError.none],
    ['stopped', ['media-empty-error'], PrinterError.media_empty],
    ['idle', ['media-empty-report'], PrinterError.media_empty],
    ['processing', ['media-needed-warning'], PrinterError.media_empty],
    ['stopped', ['media-jam'], PrinterError.media_jam],
    ['stopped', ['door-open-error', 'media-empty-error'], PrinterError.cover_open],
    ['stopped', ['marker-supply-empty-error'], PrinterError.marker_supply_empty],
    ['stopped', ['toner-empty-error'], PrinterError.marker_supply_empty],
    ['stopped', ['marker-waste-full-error'], PrinterError.marker_waste_full],
    ['stopped', ['offline-report'], PrinterError.offline],
    ['stopped', ['paused'], PrinterError.paused],
    ['idle', ['com.example-weird-error'], PrinterError.other],
    ['idle', ['com.example-weird-report'], PrinterError.none],
    ['stopped', [], PrinterError.other],
  ];
  for (const [state, reasons, code] of cases)
    assert.equal(printerErrorCode(state, reasons), code, `${state} ${reasons.join(',')}`);
  assert.deepEqual(splitReason('media-jam'), { base: 'media-jam', severity: 'error' });
});
