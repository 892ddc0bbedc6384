// Table shapes as Kysely sees them. Booleans are stored as 0/1 integers and times as Unix ms
// in BIGINT so one set of queries runs on SQLite and PostgreSQL alike.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface ApplicationsTable {
  id: string;
  name: string;
  /** No longer used: API keys live in api_keys (migration 0004); holds `moved:<id>`. */
  api_key_hash: string;
  /** No longer used (see api_key_hash). */
  api_key_prefix: string;
  /** Signing secret, encrypted (secret-box.ts): `enc:v1:…`; plain only in rows not yet converted. */
  callback_secret: string;
  /** Previous secret (encrypted likewise), still honoured by receivers until previous_secret_expires_at. */
  previous_callback_secret: string | null;
  previous_secret_expires_at: number | null;
  /** Capability flag: feedback-card recognition (20005 without it; docs/api.md, "Recognition task"). */
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
  /** While pending: when the next attempt is due (informative: the delivery job holds the schedule). */
  next_attempt_at: number;
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

/** Delayed work (jobs/): one row per next thing to do about a record. */
export interface JobsTable {
  id: string;
  kind: string;
  ref: string;
  /** Claims share capacity fairly between keys (the application a callback belongs to). */
  fair_key: string | null;
  payload: string | null;
  /** Due time; while claimed, the claim's expiry. */
  run_at: number;
  claim_token: string | null;
  attempts: Generated<number>;
  created_at: number;
}

/** Scan and print tasks (tasks/, docs/tasks.md). */
export interface TasksTable {
  uuid: string;
  kind: string;
  app_id: string;
  device_uuid: string;
  state: string;
  callback_url: string | null;
  options: string;
  error_code: Generated<number>;
  error_message: string | null;
  box_boot: string | null;
  last_seq: Generated<number>;
  created_at: number;
  acked_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number;
  item_count: Generated<number>;
  page_count: Generated<number>;
  file_bytes: Generated<number>;
  /** Print: estimated sides, once printing has started. */
  pages: number | null;
  /** Print, strict mode: sides the printer reports printed. */
  printed_pages: number | null;
  download_spent_ms: number | null;
  /** Scan: sides scanned and kept so far, skipped as blank, and when the last one was (box
   *  clock, Unix ms), from the box's scan.progress (docs/scanning.md, "Progress"). */
  scanned_pages: Generated<number>;
  skipped_pages: Generated<number>;
  last_page_at: number | null;
}

export interface ScanItemsTable {
  task_uuid: string;
  item_id: number;
  pages: number;
  page_list: string;
  blob_key: string | null;
  file_bytes: number | null;
  md5: string | null;
  cipher: string | null;
  upload_spent_ms: number | null;
  scanned_at: number;
  recorded_at: number;
}

/** Box events applied (box-link/events.ts): the id of each, so a duplicate changes nothing. */
export interface BoxEventsTable {
  id: string;
  task_uuid: string;
  seq: number;
  type: string;
  received_at: number;
}

/** An application's API keys (docs/configuration.md "Credentials"). */
export interface ApiKeysTable {
  id: string;
  app_id: string;
  /** The operator's name for it ("default" for the first). */
  name: string;
  /** sha256 of the key: keys are 256-bit random, so a fast hash is enough (as GitHub does). */
  key_hash: string;
  /** First characters of the key, shown to operators to tell keys apart. */
  key_prefix: string;
  created_at: number;
  /** Last authenticated request with it, written at most once a minute per node. */
  last_used_at: number | null;
  /** Set once revoked; a revoked key never authenticates again. */
  revoked_at: number | null;
}

/** An application's public key for end-to-end encrypted scans (docs/encryption.md). */
export interface E2eKeysTable {
  app_id: string;
  /** First 8 bytes of SHA-256 of the raw key, hex. */
  kid: string;
  /** Raw X25519 public key, hex. */
  public_key: string;
  created_at: number;
  /** Set when a newer key replaced it; null for the current key. */
  retired_at: number | null;
}

/** Deployment-wide facts (e.g. `secret_key_id`: the id of the key every node must hold). */
export interface MetaTable {
  key: string;
  value: string;
}

/** Console sessions signed out, until they would have expired (modules/console/repository.ts). */
export interface ConsoleSignoutsTable {
  session: string;
  expires_at: number;
}

/** A fixed rate-limit window several nodes share (http/rate-limit-stores.ts). */
export interface RateLimitsTable {
  key: string;
  hits: number;
  window_start: number;
}

/** Recognition tasks' own state (modules/recognition, docs/cards.md). */
export interface RecognitionsTable {
  task_uuid: string;
  token: string;
  scan_uuid: string | null;
  next_batch: Generated<number>;
  pages_received: Generated<number>;
  end_error: number | null;
  scan_ended_at: number | null;
  students_sent: Generated<number>;
  progress: Generated<number>;
}

export interface RecognitionBatchesTable {
  task_uuid: string;
  batch: number;
  webhook_id: string;
  pages: number;
  received_at: number;
}

export interface RecognitionPagesTable {
  task_uuid: string;
  seq: number;
  batch: number;
  item_id: number;
  paper_number: number;
  page_number: number;
  front: number;
  blob_key: string;
  received_at: number;
  reading: string | null;
  recognized_at: number | null;
}

export interface CardTemplatesTable {
  app_id: string;
  template_id: string;
  card_id: string;
  layout: string;
  pdf_key: string;
  created_at: number;
}

/** The review loop's audit trail: one row per correction, append-only (modules/recognition/review.ts). */
export interface RecognitionCorrectionsTable {
  task_uuid: string;
  app_id: string;
  student: number;
  revision: number;
  key_id: string;
  via: string;
  reviewer: string | null;
  created_at: number;
  correction: string;
  body: string;
  callback_id: string;
}

export interface Database {
  applications: ApplicationsTable;
  devices: DevicesTable;
  callbacks: CallbacksTable;
  callback_attempts: CallbackAttemptsTable;
  jobs: JobsTable;
  tasks: TasksTable;
  scan_items: ScanItemsTable;
  box_events: BoxEventsTable;
  rate_limits: RateLimitsTable;
  api_keys: ApiKeysTable;
  e2e_keys: E2eKeysTable;
  meta: MetaTable;
  recognitions: RecognitionsTable;
  recognition_batches: RecognitionBatchesTable;
  recognition_pages: RecognitionPagesTable;
  card_templates: CardTemplatesTable;
  console_signouts: ConsoleSignoutsTable;
  recognition_corrections: RecognitionCorrectionsTable;
  device_callbacks: DeviceCallbacksTable;
  device_reported: DeviceReportedTable;
  task_history: TaskHistoryTable;
  releases: ReleasesTable;
  rollouts: RolloutsTable;
  rollout_boxes: RolloutBoxesTable;
  device_labels: DeviceLabelsTable;
  device_history: DeviceHistoryTable;
}

/** A signed agent release (modules/releases; docs/updates.md). */
export interface ReleasesTable {
  id: string;
  version: string;
  platform: string;
  size: number;
  sha256: string;
  entry: string;
  signature: string;
  created_at: number;
}

/** A release rolled out in waves (modules/rollouts). */
export interface RolloutsTable {
  id: string;
  release_id: string;
  state: 'running' | 'done' | 'stopped' | 'canceled';
  downgrade: number;
  waves: number;
  wave: number;
  wave_pause_ms: number;
  wave_timeout_ms: number;
  max_failed_pct: number;
  selector: string;
  wave_started_at: number | null;
  reason: string | null;
  created_at: number;
  ended_at: number | null;
}

/** A box's place in a rollout. */
export interface RolloutBoxesTable {
  rollout_id: string;
  device_uuid: string;
  wave: number;
  state: 'pending' | 'sent' | 'updated' | 'failed';
  reason: string | null;
  updated_at: number;
}

export interface DeviceLabelsTable {
  device_uuid: string;
  label: string;
}

/** One entry of a box's recent history (modules/fleet). */
export interface DeviceHistoryTable {
  id: string;
  device_uuid: string;
  at: number;
  what: 'connect' | 'disconnect' | 'update' | 'error';
  detail: string | null;
}

/** An application's device callback URL (modules/device-events). */
export interface DeviceCallbacksTable {
  app_id: string;
  url: string;
  updated_at: number;
}

/** Per device and topic (online, printer, scanner): the state last reported (modules/device-events). */
export interface DeviceReportedTable {
  device_uuid: string;
  topic: string;
  value: string;
  changed_at: number | null;
  reported_at: number;
}

/** One entry of a task's timeline (modules/task-history). */
export interface TaskHistoryTable {
  id: string;
  task_uuid: string;
  at: number;
  source: string;
  what: string;
  detail: string | null;
}

export type TaskRow = Selectable<TasksTable>;
export type ScanItemRow = Selectable<ScanItemsTable>;
export type RecognitionRow = Selectable<RecognitionsTable>;
export type RecognitionPageRow = Selectable<RecognitionPagesTable>;
export type CardTemplateRow = Selectable<CardTemplatesTable>;
export type RecognitionCorrectionRow = Selectable<RecognitionCorrectionsTable>;

export type Application = Selectable<ApplicationsTable>;
export type NewApplication = Insertable<ApplicationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type E2eKeyRow = Selectable<E2eKeysTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type NewDevice = Insertable<DevicesTable>;
export type DeviceUpdate = Updateable<DevicesTable>;
export type { Generated };
