import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Application } from '../../db/schema.ts';
import { newApiKey, newCallbackSecret, sha256 } from '../../secrets.ts';
import type { ApplicationRepository } from './repository.ts';

export interface CreatedApplication { id: string; name: string; api_key: string; callback_secret: string; ess: boolean }

/**
 * Every API call authenticates, and the lookup was a fifth of an `info` request's cost, so
 * known keys are remembered briefly. Only hits are cached (a flood of wrong keys cannot evict
 * good ones or grow memory past the bound); a deleted or changed application is seen by every
 * node within AUTH_CACHE_TTL_MS.
 */
export const AUTH_CACHE_TTL_MS = 5000;
const AUTH_CACHE_MAX = 10_000;

export class ApplicationService {
  private readonly repo: ApplicationRepository;
  private readonly clock: Clock;
  private readonly keyCache = new Map<string, { app: Application; until: number }>();
  constructor(repo: ApplicationRepository, clock: Clock) { this.repo = repo; this.clock = clock; }

  /** Creates an application; the API key is returned once and only its hash is kept. */
  async create(input: { name: string; ess?: boolean }): Promise<CreatedApplication> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw new Error('application name must be 1-200 characters');
    const apiKey = newApiKey();
    const app = {
      id: randomUUID(),
      name,
      api_key_hash: sha256(apiKey),
      api_key_prefix: apiKey.slice(0, 10),
      callback_secret: newCallbackSecret(),
      previous_callback_secret: null,
      previous_secret_expires_at: null,
      cap_ess: input.ess ? 1 : 0,
      created_at: this.clock.now(),
    };
    await this.repo.insert(app);
    return { id: app.id, name, api_key: apiKey, callback_secret: app.callback_secret, ess: !!input.ess };
  }

  /** The application an API key belongs to, or undefined. */
  async authenticate(apiKey: string): Promise<Application | undefined> {
    // Keyed by the key itself (already in this process's memory with every request), so a hit
    // costs no hash; the database only ever sees the hash.
    const now = this.clock.now();
    const hit = this.keyCache.get(apiKey);
    if (hit && hit.until > now) return hit.app;
    const app = await this.repo.findByKeyHash(sha256(apiKey));
    if (!app) { this.keyCache.delete(apiKey); return undefined; }
    if (this.keyCache.size >= AUTH_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value as string);
    this.keyCache.set(apiKey, { app, until: now + AUTH_CACHE_TTL_MS });
    return app;
  }
}
