// The API client: one resource per part of the API, each method one operation.
//
// Extension points (docs/sdk.md, "Adding an endpoint"): an endpoint that lands in the server
// reaches the SDK by `npm run sdk:generate`; it is then callable at once, typed, through
// `boxhub.get` / `boxhub.post`, and operations.ts (which must name a method for every
// operation, or the SDK does not compile) asks for its resource method. Scan, print and
// recognition get their resources here (src/resources/scan.ts, …) as their endpoints land,
// with the helpers that belong to them: waiting for a task to finish, downloading and
// checking scan items, the direct-transfer receiver, encryption.
import type { Body, GetPath, PostPath, Query } from './api-types.ts';
import { CallbackLog } from './resources/callback-log.ts';
import { Control } from './resources/control.ts';
import { Operator } from './resources/operator.ts';
import { Devices } from './resources/devices.ts';
import { Encryption } from './resources/encryption.ts';
import { Print } from './resources/print.ts';
import { Recognition } from './resources/recognition.ts';
import { Scan } from './resources/scan.ts';
import { Tasks } from './resources/tasks.ts';
import { Transport, type CallOptions, type TransportOptions } from './transport.ts';

export type BoxhubOptions = TransportOptions;

export class Boxhub {
  readonly #t: Transport;
  readonly devices: Devices;
  readonly control: Control;
  /** The application's callback deliveries (test, log, replay, secret rotation). */
  readonly callbacks: CallbackLog;
  readonly scan: Scan;
  readonly print: Print;
  /** The application's public keys for end-to-end encrypted scans (helpers: encryptForBox, decryptScanItem). */
  readonly encryption: Encryption;
  /** Feedback-card recognition: recognition tasks and card templates. */
  readonly recognition: Recognition;
  /** The operator API: construct the client with BOXHUB_OPERATOR_TOKEN as `apiKey`. */
  readonly operator: Operator;
  /** What scan and print tasks share: their history. */
  readonly tasks: Tasks;

  constructor(options: BoxhubOptions) {
    this.#t = new Transport(options);
    this.devices = new Devices(this.#t);
    this.control = new Control(this.#t);
    this.callbacks = new CallbackLog(this.#t);
    this.scan = new Scan(this.#t);
    this.print = new Print(this.#t);
    this.encryption = new Encryption(this.#t);
    this.recognition = new Recognition(this.#t);
    this.operator = new Operator(this.#t);
    this.tasks = new Tasks(this.#t);
  }

  /** Any GET operation of /openapi.json by path, typed; resolves to the envelope's data. */
  get<P extends GetPath>(path: P, query: Query<P>, o?: CallOptions) {
    return this.#t.get(path, query, o);
  }

  /** Any POST operation of /openapi.json by path, typed; resolves to the envelope's data. */
  post<P extends PostPath>(path: P, body: Body<P>, o?: CallOptions) {
    return this.#t.post(path, body, o);
  }
}
