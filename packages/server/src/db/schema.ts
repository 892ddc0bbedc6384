// Table shapes as Kysely sees them. Booleans are stored as 0/1 integers and times as Unix ms
// in BIGINT so one set of queries runs on SQLite and PostgreSQL alike.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface ApplicationsTable {
  id: string;
  name: string;
  /** sha256 of the API key: keys are 256-bit random, so a fast hash is enough (as GitHub does). */
  api_key_hash: string;
  /** First characters of the key, shown to operators to tell keys apart. */
  api_key_prefix: string;
  callback_secret: string;
  /** Previous secret, still honoured by receivers until previous_secret_expires_at. */
  previous_callback_secret: string | null;
  previous_secret_expires_at: number | null;
  /** Capability flag: feedback-card recognition (spec 20005). */
  cap_ess: number;
  created_at: number;
}

export interface DevicesTable {
  uuid: string;
  code: string;
  model: string;
  secret_hash: string;
  app_id: string | null;
  name: string | null;
  remark: string | null;
  active_at: number | null;
  online: number;
  /** Connection session the presence flag belongs to (docs/box-protocol.md, "Presence"). */
  session: string | null;
  /** Last session whose end was seen: a late "online" of that session is ignored. */
  ended_session: string | null;
  last_connect_at: number | null;
  last_disconnect_at: number | null;
  /** Last BoxState the box reported, JSON. */
  state: string | null;
  state_at: number | null;
  last_power_ink_flush_at: number | null;
  created_at: number;
}

/** Callback outbox: one row per message (docs/callbacks.md). */
export interface CallbacksTable {
  /** The callback id: X-SVC-Callback-ID and webhook-id, the same on every attempt. */
  id: string;
  app_id: string;
  url: string;
  method: string;
  event: string;
  task_uuid: string | null;
  /** The exact JSON text sent. */
  body: string;
  /** Group this callback belongs to; callbacks with wait_for = this group wait for it. */
  wait_group: string | null;
  wait_for: string | null;
  /** pending | delivered | failed */
  status: string;
  attempts: Generated<number>;
  /** Failed attempts in the current round (a replay starts a new round). */
  retry_index: Generated<number>;
  /** Due time while pending; while claimed, the claim's expiry. */
  next_attempt_at: number;
  claim_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  completed_at: number | null;
}

/** One row per delivery attempt. */
export interface CallbackAttemptsTable {
  id: string;
  callback_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** The answer's first bytes, for the delivery log. */
  response: string | null;
  node_id: string;
}

export interface Database {
  applications: ApplicationsTable;
  devices: DevicesTable;
  callbacks: CallbacksTable;
  callback_attempts: CallbackAttemptsTable;
}

export type Application = Selectable<ApplicationsTable>;
export type NewApplication = Insertable<ApplicationsTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type NewDevice = Insertable<DevicesTable>;
export type DeviceUpdate = Updateable<DevicesTable>;
export type { Generated };
