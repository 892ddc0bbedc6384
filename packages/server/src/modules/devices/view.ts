// Turns a device row and the state its box last reported into the Device shape (docs/api.md).
import { printerStateReasons, scannerStateReasons, type api, type BoxState } from '@boxhub/protocol';
import { keyId } from '@boxhub/protocol/e2e.ts';
import type { DeviceRow } from '../../db/schema.ts';

type Client = api.Client;

/**
 * The stored state is re-read on every `info` and `list`; parsing it was a tenth of a request's
 * cost, so each box's last parsed state is kept, known by the time it was reported and its
 * length (a new report has a new time). One per box: kept by report, a reconnect storm held
 * each box's states from before and after it, 20,000 for 10,000 boxes, about half the node's
 * heap (a heap snapshot of the storm's node, bench/README.md, "reconnect-storm"). Room for a
 * fleet of 20,000: at 5,000 a storm of 10,000 parsed every state again on each of its
 * device-event looks.
 */
const parsed = new Map<string, { report: string; state: BoxState | undefined }>();
const PARSED_MAX = 20_000;

export function parseState(row: Pick<DeviceRow, 'uuid' | 'state' | 'state_at'>): BoxState | undefined {
  if (!row.state) return undefined;
  const report = `${row.state_at ?? ''}:${row.state.length}`;
  const kept = parsed.get(row.uuid);
  if (kept?.report === report) return kept.state;
  let s: BoxState | undefined;
  try {
    s = JSON.parse(row.state) as BoxState;
  } catch {
    s = undefined;
  }
  if (!kept && parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value as string);
  parsed.set(row.uuid, { report, state: s });
  return s;
}

/** How many boxes' parsed states are kept (tests). */
export const parsedStatesKept = (): number => parsed.size;

/** Sets `key` only when the value is present: absent fields are omitted ("all optional"). */
function put<T extends object, K extends keyof T>(o: T, key: K, v: T[K] | null | undefined): void {
  if (v !== null && v !== undefined) o[key] = v;
}

function printerView(p: BoxState['printer']): NonNullable<Client['printer']> {
  const o: NonNullable<Client['printer']> = {
    connected: p.connected,
    supported: p.supported,
    error_code: p.error_code,
  };
  put(o, 'make', p.make);
  put(o, 'model', p.model);
  put(o, 'connection_type', p.connection_type);
  // Extension (docs/printers-and-scanners.md, "Normalised state reasons").
  put(o, 'state', p.connected ? p.state : undefined);
  o.state_reasons = printerStateReasons(p);
  o.device_reasons = p.connected ? (p.state_reasons ?? []).filter((r) => r !== 'none') : [];
  return o;
}

function scannerView(s: BoxState['scanner']): NonNullable<Client['scanner']> {
  const o: NonNullable<Client['scanner']> = { connected: s.connected, supported: s.supported };
  put(o, 'make', s.make);
  put(o, 'model', s.model);
  put(o, 'connection_type', s.connection_type);
  // Extension (docs/printers-and-scanners.md, "Normalised state reasons").
  o.error_code = s.connected ? (s.error_code ?? 0) : 0;
  put(o, 'state', s.connected ? s.state : undefined);
  o.state_reasons = scannerStateReasons(s);
  o.device_reasons = s.connected ? [...(s.state_reasons ?? [])] : [];
  return o;
}

/**
 * Views of the rows the repository's lookup cache shares (frozen rows, see
 * DeviceRepository.findBound): built once per row object, as the key id's SHA-256 alone was a
 * twentieth of an `info` request. Rows read fresh are not frozen and not kept.
 */
const views = new WeakMap<DeviceRow, Client>();

export function toClient(row: DeviceRow): Client {
  const frozen = Object.isFrozen(row);
  if (frozen) {
    const v = views.get(row);
    if (v) return v;
  }
  const c = buildClient(row);
  if (frozen) views.set(row, deepFreeze(c));
  return c;
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object' && !Object.isFrozen(v)) deepFreeze(v as object);
  return Object.freeze(o);
}

function buildClient(row: DeviceRow): Client {
  const s = parseState(row);
  const c: Client = { uuid: row.uuid, code: row.code };
  put(c, 'name', row.name);
  put(c, 'remark', row.remark);
  c.model = s?.model ?? row.model;
  put(c, 'active_at', row.active_at);
  c.online = row.online === 1;
  put(c, 'last_connect_at', row.last_connect_at);
  put(c, 'last_disconnect_at', row.last_disconnect_at);
  if (s) {
    put(c, 'version', s.version);
    put(c, 'firmware', s.firmware);
    put(c, 'mac', s.mac);
    put(c, 'wlan_mac', s.wlan_mac);
    put(c, 'network_type', s.network_type);
    put(c, 'local_ip', s.local_ip);
    put(c, 'gateway_ip', s.gateway_ip);
    c.printer = printerView(s.printer);
    c.scanner = scannerView(s.scanner);
    // Extension (docs/encryption.md): the key print files are encrypted to.
    if (s.e2e_public_key) {
      c.e2e_public_key = s.e2e_public_key;
      c.e2e_kid = keyId(s.e2e_public_key);
    }
  }
  return c;
}
