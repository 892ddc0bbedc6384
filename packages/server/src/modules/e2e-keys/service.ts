// An application's public keys for end-to-end encrypted scans (docs/encryption.md, "Keys").
// Registering a key makes it the current one; the one before is retired, never deleted: a scan
// task keeps the key it was created with (in its options, sent to the box with the task).
import { ApiError, type api, messageOf } from '@boxhub/protocol';
import { keyId, rawKey } from '@boxhub/protocol/e2e.ts';
import type { Clock } from '../../clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { E2eKeyRow } from '../../db/schema.ts';
import type { E2eKeyRepository } from './repository.ts';
import { transact } from '../../db/transaction.ts';

export class E2eKeyService {
  private readonly repo: E2eKeyRepository;
  private readonly clock: Clock;
  constructor(repo: E2eKeyRepository, clock: Clock) {
    this.repo = repo;
    this.clock = clock;
  }

  async register(appId: string, body: api.E2eKeyRegisterBody): Promise<api.E2eKeyView> {
    let raw: Buffer;
    try {
      raw = rawKey(body.public_key.trim(), 'public_key');
    } catch (e) {
      throw new ApiError('INVALID_PARAMETER', messageOf(e));
    }
    // The all-zero point (and the other low-order points X25519 maps to zero) gives a shared
    // secret of zero: WebCrypto refuses it at use, so it is refused here, at registration.
    if (raw.every((b) => b === 0))
      throw new ApiError('INVALID_PARAMETER', 'public_key is the all-zero X25519 point, which no key pair has');
    const publicKey = raw.toString('hex');
    const now = this.clock.now();
    const make = () =>
      transact(this.repo.db, (trx) =>
        this.repo.makeCurrent(trx, { app_id: appId, kid: keyId(raw), public_key: publicKey, created_at: now }, now),
      );
    for (let attempt = 1; ; attempt++) {
      try {
        return view(await make());
      } catch (e) {
        // Another registration of this application committed in between (the one-current-key
        // index refused this one): again, now that the other key is there to retire.
        if (!isUniqueViolation(e) || attempt >= 10) throw e;
      }
    }
  }

  async list(appId: string): Promise<api.E2eKeyList> {
    return { keys: (await this.repo.list(appId)).map(view) };
  }

  /** The key a scan created now is encrypted to; 20601 when the application has none. */
  async forScan(appId: string): Promise<{ public_key: string; kid: string }> {
    const k = await this.repo.current(appId);
    if (!k)
      throw new ApiError(
        'E2E_APP_KEY_MISSING',
        "options.encrypt needs the application's public key: register one with POST /api/application/e2e_key/register (docs/encryption.md)",
      );
    return { public_key: k.public_key, kid: k.kid };
  }
}

function view(r: E2eKeyRow): api.E2eKeyView {
  return {
    kid: r.kid,
    public_key: r.public_key,
    created_at: Number(r.created_at),
    current: r.retired_at === null,
    ...(r.retired_at !== null ? { retired_at: Number(r.retired_at) } : {}),
  };
}
