// The bodies of the callbacks the service sends (docs/api.md, "Callbacks"; docs/callbacks.md). Each event
// is listed in /openapi.json under `webhooks` (OpenAPI 3.1), from which the SDK generates its
// event types and validators (packages/sdk, docs/sdk.md). A new event gets its schema here and
// an entry in `callbackEvents`; `npm run sdk:generate` then brings it to the SDK.
//
// The schemas describe the fields a receiver can rely on; they do not forbid others, so a
// receiver built against this version keeps working when a later one adds a field.
import Type, { type Static, type TSchema } from 'typebox';

const UnixMs = (description: string) => Type.Integer({ description: `${description}, Unix ms` });

/** `POST /api/application/callback/test` sends this through the normal delivery (docs/callbacks.md). */
export const CallbackTestEvent = Type.Object({
  event: Type.Literal('callback.test'),
  id: Type.String({ description: 'the callback id, as in X-SVC-Callback-ID and webhook-id' }),
  created_at: UnixMs('when the test was requested'),
});
export type CallbackTestEvent = Static<typeof CallbackTestEvent>;

/** One scanned page used for a student's card (docs/api.md, "Recognition result callback", pages[]). */
export const RecognitionPage = Type.Object({
  paper_number: Type.Integer({ description: 'which sheet; gaps possible with duplex and blank-page skipping' }),
  page_number: Type.Integer({ description: "which side (the second sheet's first side is 3)" }),
  front: Type.Boolean({ description: 'whether this is the front (the side facing the scanner)' }),
  item_id: Type.Integer({ description: 'scan data batch id (the item_id of scan.item_data)' }),
  temp_download_url: Type.String({ description: 'temporary download address of the page image (jpg), valid 1 hour' }),
  annotated_url: Type.Optional(
    Type.String({
      description:
        'extension: the page image with what was read drawn over it (jpg), valid 1 hour; docs/cards.md, "The review loop"',
    }),
  ),
});

export const RecognitionResult = Type.Object({
  student_id: Type.String({ description: 'student number (filled area or barcode content)' }),
  qrcode: Type.String({ description: 'QR code content' }),
  fills: Type.Array(Type.Array(Type.Integer()), {
    description:
      "filled positions: one array per detected chapter, in order, of the filled areas' indexes (from 1, left to right then top to bottom); a chapter with no fill is []",
  }),
  uncertain: Type.Optional(
    Type.Array(Type.Array(Type.Integer()), {
      description:
        'extension: per chapter, areas neither clearly filled nor clearly empty (never in fills); docs/cards.md',
    }),
  ),
});

/** docs/api.md, "Recognition result callback": POST, one per student. */
export const RecognitionResultEvent = Type.Object({
  uuid: Type.String({ description: 'recognition task uuid' }),
  finish: Type.Boolean({ description: 'whether all pages have been recognized' }),
  error_code: Type.Integer({ description: 'recognition error code: 0, or 1001-1005, 50003 (docs/errors.md)' }),
  pages: Type.Optional(
    Type.Array(RecognitionPage, { description: "scanned pages used to recognize this student's card" }),
  ),
  result: Type.Optional(
    Type.Union([RecognitionResult, Type.Null()], {
      description: 'null when recognition failed (error_code is then not 0)',
    }),
  ),
  detail: Type.Optional(Type.String({ description: 'extension: why this student failed, for people' })),
  revision: Type.Optional(
    Type.Integer({
      minimum: 1,
      description:
        'extension: present on a corrected result (1, 2, …; the recognizer\'s own has none), which replaces the student\'s earlier ones; its finish is false. docs/cards.md, "The review loop"',
    }),
  ),
});
export type RecognitionResultEvent = Static<typeof RecognitionResultEvent>;

/** docs/api.md, "Recognition end callback": PUT, once every result callback of the task has completed. */
export const RecognitionEndEvent = Type.Object({
  uuid: Type.String({ description: 'recognition task uuid' }),
  finish: Type.Boolean({ description: 'whether the whole task is complete' }),
});
export type RecognitionEndEvent = Static<typeof RecognitionEndEvent>;

/** What boxhub's own events carry at the top (docs/callbacks.md, "Scan and print events"). */
const TaskEventHead = {
  uuid: Type.String({ description: 'the task uuid (scan or print)' }),
  client_uuid: Type.String({ description: 'the device uuid' }),
  occurred_at: UnixMs('when the event happened on the server'),
};

/** scan.item_data: one item (a PDF of one batch of paper) of a scan task is stored. */
export const ScanItemDataEvent = Type.Object({
  event: Type.Literal('scan.item_data'),
  ...TaskEventHead,
  item_id: Type.Integer({ description: 'from 1; matches pages[].item_id of recognition callbacks' }),
  pages: Type.Integer({ description: 'PDF pages (scanned sides)' }),
  file_size: Type.Optional(Type.Integer({ description: 'KB; absent with direct_mode 1' })),
  upload_spent: Type.Optional(Type.Integer({ description: 'seconds; absent with direct_mode 1' })),
  check_sum: Type.Optional(Type.String({ description: 'MD5 of the file; absent with direct_mode 1' })),
  scanned_at: UnixMs("when the item's last page was scanned"),
  cipher: Type.Optional(Type.String({ description: 'hex; with encryption only (docs/encryption.md)' })),
  cipher_kid: Type.Optional(
    Type.String({ description: 'boxhub extension: kid of the application key the item is encrypted to' }),
  ),
  temp_download_url: Type.Optional(
    Type.String({ description: 'valid 1 hour from occurred_at; POST /api/scan/item_data gives fresh ones' }),
  ),
});
export type ScanItemDataEvent = Static<typeof ScanItemDataEvent>;

/** scan.finish: the scan task ended; the device takes a new scan only after this (docs/api.md, "Scan task"). */
export const ScanFinishEvent = Type.Object({
  event: Type.Literal('scan.finish'),
  ...TaskEventHead,
  action_ack: Type.Boolean(),
  action_ack_at: Type.Optional(UnixMs('when the box took the task')),
  finished: Type.Boolean(),
  item_size: Type.Integer(),
  total_pages: Type.Integer(),
  total_file_size: Type.Optional(Type.Integer({ description: 'KB; absent with direct_mode 1' })),
  error_code: Type.Integer({ description: '0, or a scan error code (docs/errors.md)' }),
  created_at: UnixMs('when the task was created'),
  finished_at: Type.Optional(UnixMs('when it ended')),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
  scanned_pages: Type.Optional(
    Type.Integer({
      description:
        'boxhub extension: sides the box scanned and kept (docs/scanning.md, "Progress"); more than total_pages when the item being assembled was lost (a stop, a power cut)',
    }),
  ),
  skipped_pages: Type.Optional(Type.Integer({ description: 'boxhub extension: blank sides skipped' })),
  last_page_at: Type.Optional(UnixMs('boxhub extension: when the box reported its last side (box clock)')),
});
export type ScanFinishEvent = Static<typeof ScanFinishEvent>;

const PrintStatus = {
  action_ack: Type.Boolean(),
  action_ack_at: Type.Optional(UnixMs('when the box took the task')),
  started: Type.Boolean(),
  started_at: Type.Optional(UnixMs('when printing started')),
  finished: Type.Boolean(),
  finished_at: Type.Optional(UnixMs('when it ended')),
  file_size: Type.Optional(Type.Integer({ description: 'KB' })),
  download_spent: Type.Optional(Type.Integer({ description: 'seconds' })),
  error_code: Type.Integer({ description: '0, or a print error code (docs/errors.md)' }),
  created_at: UnixMs('when the task was created'),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
  pages: Type.Optional(Type.Integer({ description: 'estimated sides, once printing has started' })),
  printed_pages: Type.Optional(Type.Integer({ description: 'sides the printer reports, strict mode, once ended' })),
};
const printEvent = <N extends string>(name: N) =>
  Type.Object({ event: Type.Literal(name), ...TaskEventHead, ...PrintStatus });
/** print.ack: the box has taken the task (it is in its queue). */
export const PrintAckEvent = printEvent('print.ack');
/** print.started: the printer has the job. */
export const PrintStartedEvent = printEvent('print.started');
/** print.finished: the task ended: printed, cancelled, or failed with its error code. */
export const PrintFinishedEvent = printEvent('print.finished');

/** What a device event says of a printer or a scanner (the Device resource's fields). */
const DeviceSideState = Type.Object({
  connected: Type.Boolean(),
  state: Type.Optional(Type.String({ description: 'idle, processing or stopped, while connected' })),
  state_reasons: Type.Array(Type.String(), {
    description:
      'normalised state reasons (docs/printers-and-scanners.md, "Normalised state reasons"); [] when nothing is wrong',
  }),
  error_code: Type.Integer({
    description: 'printer: printer error code; scanner: 0 or the scan error code of its fault (docs/errors.md)',
  }),
});

const DeviceEventHead = {
  client_uuid: Type.String({ description: 'the device uuid' }),
  occurred_at: UnixMs('when the change was confirmed (it had held for the settle time)'),
  changed_at: UnixMs('when the server first saw the change'),
};

const onlineEvent = <N extends string>(name: N) =>
  Type.Object({
    event: Type.Literal(name),
    ...DeviceEventHead,
    online: Type.Boolean(),
  });
/** device.online: the box is connected again (the change held for the settle time). */
export const DeviceOnlineEvent = onlineEvent('device.online');
/** device.offline: the box is gone (the change held for the settle time). */
export const DeviceOfflineEvent = onlineEvent('device.offline');

const sideEvent = <N extends string>(name: N) =>
  Type.Object({
    event: Type.Literal(name),
    ...DeviceEventHead,
    state: DeviceSideState,
    previous: Type.Optional(DeviceSideState),
  });
/** device.printer_state: the printer's connected / state / state_reasons / error_code changed. */
export const DevicePrinterStateEvent = sideEvent('device.printer_state');
/** device.scanner_state: the scanner's connected / state / state_reasons / error_code changed. */
export const DeviceScannerStateEvent = sideEvent('device.scanner_state');

export interface CallbackEventSpec {
  method: 'POST' | 'PUT';
  summary: string;
  body: TSchema;
}

/**
 * Every callback event, by the name the delivery log shows. Events whose body names them
 * (`event`, boxhub's convention for its own events) are told apart by that field; the
 * recognition bodies (docs/api.md, "Events") carry no name and are told apart by method (POST result, PUT end).
 */
export const callbackEvents = {
  'callback.test': {
    method: 'POST',
    summary: 'A test event, sent on request to check a receiver',
    body: CallbackTestEvent,
  },
  'scan.item_data': {
    method: 'POST',
    summary: 'A scan item (one PDF) is stored: its fields and a download link',
    body: ScanItemDataEvent,
  },
  'scan.finish': {
    method: 'POST',
    summary: 'A scan task ended; the device takes a new scan only after this',
    body: ScanFinishEvent,
  },
  'print.ack': { method: 'POST', summary: 'The box has taken a print task', body: PrintAckEvent },
  'print.started': { method: 'POST', summary: 'Printing has started', body: PrintStartedEvent },
  'print.finished': {
    method: 'POST',
    summary: 'A print task ended: printed, cancelled or failed',
    body: PrintFinishedEvent,
  },
  'recognition.result': {
    method: 'POST',
    summary: "One student's recognition result (spec: one callback per student)",
    body: RecognitionResultEvent,
  },
  'device.online': {
    method: 'POST',
    summary: 'A device is online again (a change that held for the settle time)',
    body: DeviceOnlineEvent,
  },
  'device.offline': {
    method: 'POST',
    summary: 'A device went offline (a change that held for the settle time)',
    body: DeviceOfflineEvent,
  },
  'device.printer_state': {
    method: 'POST',
    summary: "A device's printer changed state (connected, state, reasons, error code)",
    body: DevicePrinterStateEvent,
  },
  'device.scanner_state': {
    method: 'POST',
    summary: "A device's scanner changed state (connected, state, reasons, error code)",
    body: DeviceScannerStateEvent,
  },
  'recognition.end': {
    method: 'PUT',
    summary: 'The recognition task ended; sent after every result callback completed',
    body: RecognitionEndEvent,
  },
} as const satisfies Record<string, CallbackEventSpec>;
export type CallbackEventName = keyof typeof callbackEvents;
