// The 30004 refusal for a box that is not connected, with what an application can act on: when
// it was last seen (or that it never connected) and what to check (docs/errors.md, 30004).
import { ApiError } from '@boxhub/protocol';
import type { DeviceRow } from '../../db/schema.ts';

export function offlineError(d: Pick<DeviceRow, 'last_disconnect_at' | 'last_connect_at' | 'active_at'>): ApiError {
  // last_disconnect_at alone is no sign of a session: a server that is its own broker marks
  // every box offline when it starts.
  const seen = d.last_connect_at === null ? null : (d.last_disconnect_at ?? d.active_at ?? d.last_connect_at);
  if (seen === null) {
    return new ApiError(
      'DEVICE_OFFLINE',
      "device is offline: it has never connected; check that its agent runs with this device's uuid and secret and reaches the service's box link (MQTT)",
      { last_seen_at: null },
    );
  }
  return new ApiError(
    'DEVICE_OFFLINE',
    `device is offline since ${new Date(seen).toISOString().replace(/\.\d{3}Z$/, 'Z')}: check that the box is powered on, on the network, and that its agent reaches the service's box link (MQTT)`,
    { last_seen_at: seen },
  );
}
