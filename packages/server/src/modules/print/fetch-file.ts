// Fetches a print create's file_url (docs/api.md, "POST /api/print/create"): only through the URL guard
// (public addresses, checked again at connect time after DNS), never following a redirect,
// within a size and a time limit, the answer read as it streams and dropped at the limit.
import { ApiError, messageOf } from '@boxhub/protocol';
import { request, type Dispatcher } from 'undici';

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
}

export async function fetchFile(url: string, dispatcher: Dispatcher, limits: FetchLimits): Promise<Buffer> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), limits.timeoutMs);
  try {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher,
        method: 'GET',
        signal: ac.signal,
        headers: { 'user-agent': 'boxhub (print file fetch)' },
      });
    } catch (e) {
      const err = e as Error & { code?: string };
      if (
        err.code === 'BOXHUB_BLOCKED_ADDRESS' ||
        (err.cause as { code?: string } | undefined)?.code === 'BOXHUB_BLOCKED_ADDRESS'
      ) {
        throw new ApiError('URL_NOT_ALLOWED', `file_url: ${err.message}`);
      }
      throw new ApiError(
        'PRINT_FETCH_FAILED',
        ac.signal.aborted
          ? `file_url did not answer within ${limits.timeoutMs / 1000} s`
          : `file_url could not be fetched: ${err.code ? `${err.code}: ` : ''}${err.message}`,
      );
    }
    if (res.statusCode >= 300 && res.statusCode < 400) {
      res.body.on('error', ignore).destroy();
      throw new ApiError(
        'PRINT_FETCH_FAILED',
        `file_url answered HTTP ${res.statusCode} (a redirect${res.headers.location ? ` to ${String(res.headers.location).slice(0, 100)}` : ''}); redirects are not followed: give the file's final address`,
      );
    }
    if (res.statusCode !== 200) {
      res.body.on('error', ignore).destroy();
      throw new ApiError('PRINT_FETCH_FAILED', `file_url answered HTTP ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      res.body.on('error', ignore).destroy();
      throw new ApiError(
        'PRINT_FILE_TOO_LARGE',
        `file_url's file is ${declared} bytes; at most ${limits.maxBytes} are accepted`,
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limits.maxBytes) {
          res.body.on('error', ignore).destroy();
          throw new ApiError(
            'PRINT_FILE_TOO_LARGE',
            `file_url's file is larger than the ${limits.maxBytes} bytes accepted`,
          );
        }
        chunks.push(chunk);
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError(
        'PRINT_FETCH_FAILED',
        ac.signal.aborted
          ? `file_url did not send the whole file within ${limits.timeoutMs / 1000} s`
          : `file_url's answer broke off: ${messageOf(e)}`,
      );
    }
    return Buffer.concat(chunks, size);
  } finally {
    clearTimeout(timer);
  }
}

/** Strict Base64 (RFC 4648 §4, whitespace allowed between lines): Buffer.from would silently
 *  skip any other character and print a different file. */
export function decodeBase64(text: string, maxBytes: number): Buffer {
  const clean = text.replace(/\s+/g, '');
  if (clean.length === 0 || clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw notBase64();
  if ((clean.length / 4) * 3 > maxBytes + 2) throw base64TooLarge(maxBytes);
  return Buffer.from(clean, 'base64');
}

export const notBase64 = () =>
  new ApiError(
    'INVALID_PARAMETER',
    'file_content is not Base64 (RFC 4648: A-Z a-z 0-9 + /, padded with = to a multiple of 4)',
  );
export const base64TooLarge = (maxBytes: number) =>
  new ApiError('PRINT_FILE_TOO_LARGE', `file_content holds more than the ${maxBytes} bytes accepted`);

/** An answer body dropped unread: its "aborted" error must not become an uncaught exception. */
const ignore = (): void => undefined;
