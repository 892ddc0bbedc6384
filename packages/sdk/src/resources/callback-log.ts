// The application's callback deliveries: test, log, replay, secret rotation
// (docs/callbacks.md). Receiving and verifying callbacks is in ../callbacks/.
import type { Body, GetResult, Query } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type CallbackDelivery = GetResult<'/api/application/callback/list'>['callbacks'][number];

export class CallbackLog {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Sends a `callback.test` event to `callback_url` through the real delivery (retries included). */
  test(body: Body<'/api/application/callback/test'>, o?: CallOptions) {
    return this.#t.post('/api/application/callback/test', body, o);
  }

  /** One page (20, newest first) of deliveries with their attempts. */
  list(query: Query<'/api/application/callback/list'>, o?: CallOptions) {
    return this.#t.get('/api/application/callback/list', query, o);
  }

  /** Sends a delivered or failed callback again (same id and body). */
  replay(body: Body<'/api/application/callback/replay'>, o?: CallOptions) {
    return this.#t.post('/api/application/callback/replay', body, o);
  }

  /**
   * A new signing secret, shown once. Until `previous_secret_expires_at` callbacks carry both
   * signatures: give the receiver both secrets (CallbackReceiver) until then.
   */
  rotateSecret(o?: CallOptions) {
    return this.#t.post('/api/application/callback/rotate_secret', {}, o);
  }
}
