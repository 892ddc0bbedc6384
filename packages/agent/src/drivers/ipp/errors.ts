// Typed failures of the IPP layer, so the driver can tell "printer absent" from "printer said no".
import { statusName } from './tags.ts';

/** Bytes that do not form an IPP message (RFC 8010 §3); `offset` is where decoding stopped. */
export class IppDecodeError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`IPP decode error at byte ${offset}: ${message}`);
    this.name = 'IppDecodeError';
    this.offset = offset;
  }
}

/** The printer could not be reached or the HTTP exchange failed (connect, TLS, timeout). */
export class IppTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IppTransportError';
  }
}

/** A non-200 HTTP answer. 426 means the printer wants TLS (RFC 8010 §8.2, RFC 2817). */
export class IppHttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'IppHttpError';
    this.status = status;
  }
}

/** An IPP response whose status-code is an error (>= 0x0400, RFC 8011 §B.1). */
export class IppStatusError extends Error {
  readonly status: number;
  readonly statusName: string;
  constructor(status: number, operation: string, statusMessage?: string) {
    super(`${operation} failed: ${statusName(status)}${statusMessage ? ` (${statusMessage})` : ''}`);
    this.name = 'IppStatusError';
    this.status = status;
    this.statusName = statusName(status);
  }
}
