// Receiving callbacks: Standard Webhooks verification (https://www.standardwebhooks.com,
// docs/callbacks.md "Verifying a callback") with the reference library `standardwebhooks`,
// then the typed event (events.ts).
//
// Secret rotation: after `boxhub.callbacks.rotateSecret()` every callback carries two
// signatures, by the new and by the previous secret, until previous_secret_expires_at. Give
// the receiver every secret it should accept (new first); a callback is genuine when any of
// its signatures matches any of them.
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { InvalidCallbackError } from './errors.ts';
import { parseCallback, type CallbackEvent } from './events.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

export type CallbackHeaders = Headers | IncomingHttpHeaders | Record<string, string | string[] | undefined>;

export interface ReceivedCallback {
  /** The request method (POST or PUT). */
  method: string;
  headers: CallbackHeaders;
  /** The body exactly as received: verify before parsing, re-serialised JSON does not match. */
  body: string | Uint8Array;
}

export interface CallbackReceiverOptions {
  /** The application's `whsec_…` signing secret, or several during a rotation. */
  secrets: string | readonly string[];
}

export class CallbackReceiver {
  readonly #hooks: Webhook[];

  constructor(o: CallbackReceiverOptions) {
    const secrets = typeof o.secrets === 'string' ? [o.secrets] : [...o.secrets];
    if (secrets.length === 0) throw new TypeError('at least one callback secret is needed');
    this.#hooks = secrets.map((s) => new Webhook(s));
  }

  /**
   * Checks the signature (any secret, any of the signatures) and the timestamp (within 5
   * minutes), then returns the typed event. Throws InvalidCallbackError: answer 400 then.
   */
  receive(callback: ReceivedCallback): CallbackEvent {
    const { id, body } = this.verify(callback);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (e) {
      throw new InvalidCallbackError('body', `callback ${id}: the body is not JSON: ${messageOf(e)}`);
    }
    return parseCallback({ method: callback.method, id, body: json });
  }

  /** Only the signature check: returns the callback id and the body as text. */
  verify(callback: Pick<ReceivedCallback, 'headers' | 'body'>): { id: string; body: string } {
    const headers = flatHeaders(callback.headers);
    const body =
      typeof callback.body === 'string'
        ? callback.body
        : Buffer.from(callback.body.buffer, callback.body.byteOffset, callback.body.byteLength).toString('utf8');
    if (!headers['webhook-id'] || !headers['webhook-timestamp'] || !headers['webhook-signature']) {
      throw new InvalidCallbackError('headers', 'missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    let last: unknown;
    for (const hook of this.#hooks) {
      try {
        // The body is parsed (and its parse failure reported) by receive(), not by the library.
        hook.verify(body, headers, { jsonParse: false });
        return { id: headers['webhook-id'], body };
      } catch (e) {
        if (!(e instanceof WebhookVerificationError)) throw e;
        last = e;
      }
    }
    const message = messageOf(last);
    throw new InvalidCallbackError(
      /timestamp too/i.test(message) ? 'timestamp' : /headers/i.test(message) ? 'headers' : 'signature',
      `callback ${headers['webhook-id']}: ${message}`,
    );
  }
}

/** A fetch Headers object, by its methods (another realm's or undici's own pass too); a header
 *  named "entries" in a plain object is a string, not a function. */
function isHeaders(h: CallbackHeaders): h is Headers {
  return 'entries' in h && typeof h.entries === 'function' && 'get' in h && typeof h.get === 'function';
}

function flatHeaders(h: CallbackHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: Iterable<[string, unknown]> = isHeaders(h) ? h.entries() : Object.entries(h);
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}
