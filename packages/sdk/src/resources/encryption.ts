// The application's public keys for end-to-end encrypted scans (docs/encryption.md, "Keys").
// The helpers that encrypt and decrypt are in ../e2e.ts.
import type { Body } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export class Encryption {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Registers the application's X25519 public key (hex or base64url); it becomes the key scans
   *  are encrypted to. Rotation is registering a new one: tasks created before keep the old. */
  registerKey(body: Body<'/api/application/e2e_key/register'>, o?: CallOptions) {
    return this.#t.post('/api/application/e2e_key/register', body, o);
  }

  /** Every key registered, newest first, with its kid and whether it is current. */
  listKeys(o?: CallOptions) {
    return this.#t.get('/api/application/e2e_key/list', {}, o);
  }
}
