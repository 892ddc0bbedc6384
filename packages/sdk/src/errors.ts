// The one error class of API calls. The service answers every request with HTTP 200 and a
// `{code, msg, data}` envelope (docs/api.md, "Conventions"); a non-zero code becomes a BoxhubError
// carrying that code, msg and data. A call that got no envelope at all (no connection, a
// proxy's error page) is a BoxhubError too, with `code` null and `kind` saying why.

import { ErrorCode } from './generated/error-codes.ts';

/**
 * The envelope `data` the service sends with these codes (docs/errors.md); every other code
 * sends `null`. Read it typed with `error.dataOf(code)`.
 */
export interface ErrorData {
  [ErrorCode.RATE_LIMITED]: { retry_after: number };
  /** The node's document and image work is at its bound; try again after retry_after seconds. */
  [ErrorCode.SERVER_BUSY]: { retry_after: number };
  /** Only when scan or print create timed out; the task was ended. */
  [ErrorCode.DEVICE_TIMEOUT]: { uuid: string } | null;
  [ErrorCode.DEVICE_COOLDOWN]: { next_allowed_at: number };
  [ErrorCode.SCAN_EXISTS]: { exist_uuid: string };
  [ErrorCode.PRINTER_ERROR]: { printer_error_code: number };
  [ErrorCode.RECOGNITION_TASK_TAKEN]: { scan_uuid: string | null };
  [ErrorCode.CARD_DEFINITION_INVALID]: { problems: string[] };
}

export type BoxhubErrorKind =
  /** The service answered with a non-zero envelope code (docs/errors.md). */
  | 'api'
  /** Something answered, but not with an envelope: another HTTP status, or not JSON. */
  | 'http'
  /** No answer: the connection failed or timed out (after the retries, see RetryOptions). */
  | 'network';

export interface BoxhubErrorInit {
  kind: BoxhubErrorKind;
  code: number | null;
  msg: string;
  data?: unknown;
  status?: number | undefined;
  method: string;
  path: string;
  cause?: unknown;
}

export class BoxhubError extends Error {
  override readonly name = 'BoxhubError';
  readonly kind: BoxhubErrorKind;
  /** The envelope's code (ErrorCode), or null when no envelope arrived. */
  readonly code: number | null;
  /** The envelope's msg, or what went wrong when no envelope arrived. */
  readonly msg: string;
  /** The envelope's data (e.g. `exist_uuid` with 30204), else null. */
  readonly data: unknown;
  /** HTTP status of the answer; undefined when there was none. */
  readonly status: number | undefined;
  readonly method: string;
  readonly path: string;

  /** The envelope's data, typed, when this error has `code` (ErrorData); else undefined. */
  dataOf<C extends keyof ErrorData>(code: C): ErrorData[C] | undefined {
    return this.code === code ? (this.data as ErrorData[C]) : undefined;
  }

  constructor(init: BoxhubErrorInit) {
    super(
      `${init.method} ${init.path}: ${init.code !== null ? `${init.code} ` : ''}${init.msg}`,
      init.cause !== undefined ? { cause: init.cause } : undefined,
    );
    this.kind = init.kind;
    this.code = init.code;
    this.msg = init.msg;
    this.data = init.data ?? null;
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
  }
}
