// What a device event compares and reports (docs/callbacks.md, "Device events"): per topic the
// part of the Device resource an application acts on. Two snapshots that serialise alike are
// the same state: nothing to report.
import { printerStateReasons, scannerStateReasons, type BoxState } from '@boxhub/protocol';
import type { DeviceRow } from '../../db/schema.ts';
import { parseState } from '../devices/view.ts';

export const TOPICS = ['online', 'printer', 'scanner'] as const;
export type Topic = (typeof TOPICS)[number];

export interface SideState {
  connected: boolean;
  state?: string;
  state_reasons: string[];
  error_code: number;
}
export interface Snapshot {
  online: { online: boolean };
  printer?: SideState;
  scanner?: SideState;
}

export function printerSide(p: BoxState['printer']): SideState {
  return {
    connected: p.connected,
    ...(p.connected && p.state ? { state: p.state } : {}),
    state_reasons: printerStateReasons(p),
    error_code: p.error_code,
  };
}

export function scannerSide(s: BoxState['scanner']): SideState {
  return {
    connected: s.connected,
    ...(s.connected && s.state ? { state: s.state } : {}),
    state_reasons: scannerStateReasons(s),
    error_code: s.connected ? (s.error_code ?? 0) : 0,
  };
}

/** The printer and scanner as last reported, while the box is online; an offline box's last
 *  report is stale, so only `online` counts then. */
export function snapshotOf(row: Pick<DeviceRow, 'uuid' | 'state' | 'state_at' | 'online'>): Snapshot {
  const online = row.online === 1;
  const s = online ? parseState(row) : undefined;
  return { online: { online }, ...(s ? { printer: printerSide(s.printer), scanner: scannerSide(s.scanner) } : {}) };
}

export const serialise = (v: unknown): string => JSON.stringify(v);
