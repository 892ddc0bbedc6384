// Long-running jobs on a box (scan, print) over the box link (docs/box-protocol.md, "Jobs").
//
//   server ── cmd  scan.start / print.start ──▶ box   acknowledged at once (the box has taken
//                                                     the task, or says why not)
//   box    ── event (durable, per task seq) ──▶ server   applied once, in seq order, in the same
//                                                        transaction as its effect; then
//   server ── cmd  events.ack {ids} ──────────▶ box   and only then the box forgets the event
//   box    ── req  upload.url / download.url ─▶ server ── cmd reply ──▶ box   (short-lived URLs)
//
// Files never travel over MQTT: scans go up and print files come down over HTTPS with signed
// URLs the server issues per item or per task.
import Type, { type Static } from 'typebox';
import { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from './constants.ts';

const Uuid = Type.String({ minLength: 1, maxLength: 64 });
const Url = Type.String({ minLength: 1, maxLength: 4096 });
const Md5 = Type.String({ pattern: '^[0-9a-f]{32}$' });
const Ms = Type.Integer({ minimum: 0 });

// ---------------------------------------------------------------------------------------------
// Job options as the box receives them: the server has applied every default of the API and
// checked every bound, so the box never guesses.

/** Direct transfer of pages to an address (docs/direct-transfer.md). */
export const DirectTransfer = Type.Object({
  /** 1: pages only, no PDF item uploaded; 2: pages, and the PDF items are uploaded too. */
  mode: Type.Union([Type.Literal(1), Type.Literal(2)]),
  page_size: Type.Integer({ minimum: 1, maximum: 10 }),
  addr: Url,
  /** Per-task Standard Webhooks secret (whsec_…) that signs each batch's manifest. */
  secret: Type.String({ minLength: 1, maxLength: 200 }),
  /** Cleartext HTTP/2 (h2c) only when the receiver asked for it; TLS negotiates h2 by ALPN. */
  h2c: Type.Optional(Type.Boolean()),
});
export type DirectTransfer = Static<typeof DirectTransfer>;

/** End-to-end encryption of what leaves the box (docs/encryption.md). */
export const ScanEncryption = Type.Object({
  /** The application's X25519 public key, hex (32 bytes). */
  public_key: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** Key id the application registered it under, echoed in items. */
  kid: Type.String({ minLength: 1, maxLength: 64 }),
});
export type ScanEncryption = Static<typeof ScanEncryption>;

export const ScanJobOptions = Type.Object({
  duplex: Type.Boolean(),
  resolution: Type.Integer({ minimum: 50, maximum: 4800 }),
  /** color_type (docs/api.md): 0 colour, 1 black and white (8-bit greyscale: JPEG has no 1-bit form). */
  color: Type.Union([Type.Literal('color'), Type.Literal('grayscale')]),
  /** JPEG quality 1-100 (scan create options.quality). */
  quality: Type.Integer({ minimum: 1, maximum: 100 }),
  blank_page_skip: Type.Boolean(),
  continuous: Type.Boolean(),
  /** Seconds to wait for more paper once the feeder is empty (continuous mode); 0 = until stopped. */
  continuous_wait: Type.Integer({ minimum: 0 }),
  direct: Type.Optional(DirectTransfer),
  encrypt: Type.Optional(ScanEncryption),
  /** The item rule (docs/scanning.md, "Items as the stack scans"): an item is closed at the end
   *  of a sheet once it holds `item_pages` pages or its first page is `item_seconds` old (0:
   *  no time rule). Absent (a server before the rule): the box's defaults. */
  item_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  item_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
});
export type ScanJobOptions = Static<typeof ScanJobOptions>;

/** A page range of the document, 1-based and inclusive. */
export const PageRange = Type.Object({ from: Type.Integer({ minimum: 1 }), to: Type.Integer({ minimum: 1 }) });
export type PageRange = Static<typeof PageRange>;

export const PrintJobOptions = Type.Object({
  media_size: Type.Enum(MediaSize),
  media_type: Type.Enum(MediaType),
  color_mode: Type.Optional(Type.Enum(ColorMode)),
  borderless: Type.Boolean(),
  quality: Type.Optional(Type.Enum(Quality)),
  duplex: Type.Optional(Type.Enum(Duplex)),
  input_slot: Type.Optional(Type.Enum(InputSlot)),
  /** Print create options.number (docs/printing.md, "Options and defaults"). */
  copies: Type.Integer({ minimum: 1, maximum: 999 }),
  collate: Type.Boolean(),
  reverse: Type.Boolean(),
  /** Absent: every page. */
  page_ranges: Type.Optional(Type.Array(PageRange, { minItems: 1, maxItems: 100 })),
  /** Report the printer's own job-impressions-completed as printed_pages. */
  strict: Type.Boolean(),
});
export type PrintJobOptions = Static<typeof PrintJobOptions>;

/** The document as the box fetches it. */
export const PrintFile = Type.Object({
  /** Short-lived signed GET URL on the server's store (the box asks for a fresh one with
   *  download.url once it expires), or, with `direct`, the application's own file_url. */
  url: Url,
  url_expires_at: Type.Optional(Ms),
  format: Type.Union([Type.Literal('pdf'), Type.Literal('jpg')]),
  /** MD5 (hex) and size in bytes of the bytes the box downloads (encrypted bytes, when
   *  encrypted); with `direct` the MD5 only when the application gave file_check_sum. */
  md5: Type.Optional(Md5),
  size: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Print options.direct: the box fetches the application's URL itself (public addresses
   *  only, no redirects, size-limited); the server never saw the file. */
  direct: Type.Optional(Type.Boolean()),
  /** Present when the file is end-to-end encrypted to this box (docs/encryption.md). */
  cipher: Type.Optional(Type.String({ pattern: '^[0-9a-f]{2,1024}$' })),
});
export type PrintFile = Static<typeof PrintFile>;

// ---------------------------------------------------------------------------------------------
// Commands (server → box, box/{uuid}/cmd). Each carries the envelope of box-messages.ts
// (`v`, `id`, `reply_to`, `expires_at`); `type` and `params` are typed here.

export const ScanStartParams = Type.Object({ task: Uuid, options: ScanJobOptions });
export type ScanStartParams = Static<typeof ScanStartParams>;
export const ScanStopParams = Type.Object({ task: Uuid });
export type ScanStopParams = Static<typeof ScanStopParams>;
export const PrintStartParams = Type.Object({
  task: Uuid,
  /** Server time the task was created: the box prints in creation order. */
  created_at: Ms,
  file: PrintFile,
  options: PrintJobOptions,
  /** The server's count of sides (`pages`, docs/api.md "Print task": selected pages × copies), when it saw the file. */
  pages: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type PrintStartParams = Static<typeof PrintStartParams>;
export const PrintCancelParams = Type.Object({
  /** Tasks to cancel (queued or printing); one the box does not hold yet is refused if it comes later. */
  tasks: Type.Array(Uuid, { maxItems: 10000 }),
  /** Also every other task the box holds (API print cancel: "empties the print queue"). Without
   *  it only the listed tasks go (a task the server ended while the box was taking it). */
  all: Type.Optional(Type.Boolean()),
});
export type PrintCancelParams = Static<typeof PrintCancelParams>;
/** The server has applied these events: the box may forget them. Not acknowledged. */
export const EventsAckParams = Type.Object({ ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000 }) });
export type EventsAckParams = Static<typeof EventsAckParams>;
/** The answer to a box request. Not acknowledged. */
export const ReplyParams = Type.Object({
  request: Uuid,
  ok: Type.Boolean(),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  error: Type.Optional(Type.String({ maxLength: 512 })),
  /** Not a refusal but a failure for now (the server's database or storage out of reach): the
   *  box asks again later, as when no reply comes (docs/box-protocol.md, "Requests"). */
  retry: Type.Optional(Type.Boolean()),
});
export type ReplyParams = Static<typeof ReplyParams>;

export const JobCommandParams = {
  'scan.start': ScanStartParams,
  'scan.stop': ScanStopParams,
  'print.start': PrintStartParams,
  'print.cancel': PrintCancelParams,
  'events.ack': EventsAckParams,
  reply: ReplyParams,
} as const;
export type JobCommandType = keyof typeof JobCommandParams;
/** Commands the box answers on box/{uuid}/ack/{node}; the rest are one-way. */
export const ACKED_JOB_COMMANDS: readonly JobCommandType[] = ['scan.start', 'scan.stop', 'print.start', 'print.cancel'];

// ---------------------------------------------------------------------------------------------
// Durable job events (box → server, box/{uuid}/event). The box keeps each on its disk until
// the server's events.ack names it, and re-sends what is unacknowledged after every reconnect.
// `seq` counts from 1 per task; the server applies a task's events in seq order, exactly once.

/** One page of a scan item (its place in the stack: pages[] of recognition results, docs/api.md). */
export const ScanPageInfo = Type.Object({
  paper_number: Type.Integer({ minimum: 1 }),
  page_number: Type.Integer({ minimum: 1 }),
  front: Type.Boolean(),
});
export type ScanPageInfo = Static<typeof ScanPageInfo>;

export const ScanItemData = Type.Object({
  item_id: Type.Integer({ minimum: 1 }),
  pages: Type.Array(ScanPageInfo, { minItems: 1, maxItems: 10000 }),
  /** Absent when direct_mode 1 (nothing uploaded); then md5, size and upload_spent are absent too. */
  upload: Type.Optional(
    Type.Object({
      md5: Md5,
      size: Type.Integer({ minimum: 1 }),
      upload_spent_ms: Ms,
      /** Hex HPKE cipher of the item's content key, when the scan is encrypted. */
      cipher: Type.Optional(Type.String({ pattern: '^[0-9a-f]{2,1024}$' })),
    }),
  ),
  /** Box clock, Unix ms, when the item's last page was scanned. */
  scanned_at: Ms,
});
export type ScanItemData = Static<typeof ScanItemData>;

export const ScanFinishedData = Type.Object({
  /** 0, or a scan error code (docs/errors.md, "Scan error codes"). */
  error_code: Type.Integer({ minimum: 0 }),
  message: Type.Optional(Type.String({ maxLength: 512 })),
  items: Type.Integer({ minimum: 0 }),
  pages: Type.Integer({ minimum: 0 }),
});
export type ScanFinishedData = Static<typeof ScanFinishedData>;

export const PrintDownloadedData = Type.Object({ download_spent_ms: Ms, size: Type.Integer({ minimum: 0 }) });
export type PrintDownloadedData = Static<typeof PrintDownloadedData>;
export const PrintStartedData = Type.Object({
  /** Estimated sides: selected pages × copies (`pages`, docs/api.md); from the decrypted file when encrypted. */
  pages: Type.Integer({ minimum: 0 }),
});
export type PrintStartedData = Static<typeof PrintStartedData>;
export const PrintFinishedData = Type.Object({
  outcome: Type.Union([Type.Literal('completed'), Type.Literal('canceled'), Type.Literal('failed')]),
  /** 0, or a print error code (docs/errors.md, "Print error codes"). */
  error_code: Type.Integer({ minimum: 0 }),
  message: Type.Optional(Type.String({ maxLength: 512 })),
  /** The printer's final job-impressions-completed (strict mode); absent when it reports none. */
  printed_pages: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type PrintFinishedData = Static<typeof PrintFinishedData>;
/** The printer's count of sides done so far while it prints (its job-impressions-completed):
 *  for the task's history only (docs/tasks.md, "History"). */
export const PrintProgressData = Type.Object({ impressions_completed: Type.Integer({ minimum: 0 }) });
export type PrintProgressData = Static<typeof PrintProgressData>;

export const JobEventData = {
  'scan.item': ScanItemData,
  'scan.finished': ScanFinishedData,
  'print.downloaded': PrintDownloadedData,
  'print.started': PrintStartedData,
  'print.finished': PrintFinishedData,
  'print.progress': PrintProgressData,
} as const;
export type JobEventType = keyof typeof JobEventData;
export type JobEventDataOf<T extends JobEventType> = Static<(typeof JobEventData)[T]>;

export const JobEvent = Type.Object({
  v: Type.Literal(1),
  /** Unique per event (a UUID): the key of events.ack. */
  id: Uuid,
  task: Uuid,
  seq: Type.Integer({ minimum: 1 }),
  /** Box clock, Unix ms: informative. */
  at: Ms,
  type: Type.Enum(Object.keys(JobEventData) as JobEventType[]),
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type JobEvent = Static<typeof JobEvent>;
/** A job event with its data typed by its type. */
export type TypedJobEvent = {
  [T in JobEventType]: Omit<JobEvent, 'type' | 'data'> & { type: T; data: JobEventDataOf<T> };
}[JobEventType];

// ---------------------------------------------------------------------------------------------
// Requests (box → server, box/{uuid}/req), answered by a `reply` command. Not durable: a box
// that gets no reply asks again.

export const UploadUrlParams = Type.Object({
  task: Uuid,
  item_id: Type.Integer({ minimum: 1 }),
  size: Type.Integer({ minimum: 1 }),
  md5: Md5,
});
export type UploadUrlParams = Static<typeof UploadUrlParams>;
export const UploadUrlReply = Type.Object({
  url: Url,
  method: Type.Literal('PUT'),
  /** Headers the PUT must carry exactly (they are part of the signature). */
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Ms,
});
export type UploadUrlReply = Static<typeof UploadUrlReply>;
export const DownloadUrlParams = Type.Object({ task: Uuid });
export type DownloadUrlParams = Static<typeof DownloadUrlParams>;
export const DownloadUrlReply = Type.Object({ url: Url, expires_at: Ms });
export type DownloadUrlReply = Static<typeof DownloadUrlReply>;

/** Where a scan is (docs/scanning.md, "Progress"): counts so far, sent as pages come, the newest
 *  only. Not durable: a lost one is overtaken by the next, and the items carry the counts that
 *  are kept. Answered with an empty reply. */
export const ScanProgressParams = Type.Object({
  task: Uuid,
  /** Sides scanned and kept (in an item, recorded or not) since the task began. */
  pages: Type.Integer({ minimum: 0 }),
  /** Sides skipped as blank. */
  skipped: Type.Integer({ minimum: 0 }),
  /** Box clock, Unix ms, of the last side scanned. */
  at: Ms,
});
export type ScanProgressParams = Static<typeof ScanProgressParams>;

export const BoxRequestParams = {
  'upload.url': UploadUrlParams,
  'download.url': DownloadUrlParams,
  'scan.progress': ScanProgressParams,
} as const;
export type BoxRequestType = keyof typeof BoxRequestParams;

export const BoxRequest = Type.Object({
  v: Type.Literal(1),
  id: Uuid,
  type: Type.Enum(Object.keys(BoxRequestParams) as BoxRequestType[]),
  /** Node that should answer is any: requests go to a shared subscription. */
  params: Type.Record(Type.String(), Type.Unknown()),
});
export type BoxRequest = Static<typeof BoxRequest>;

// ---------------------------------------------------------------------------------------------
// What the box reports of its jobs in BoxState (reconciliation after a reboot or an outage).

export const BoxJobState = Type.Object({
  task: Uuid,
  kind: Type.Union([Type.Literal('scan'), Type.Literal('print')]),
  /** queued: received, waiting its turn; running: scanning or printing; ending: finishing up. */
  state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('ending')]),
});
export type BoxJobState = Static<typeof BoxJobState>;
