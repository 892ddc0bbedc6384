// Applications and their API keys (docs/configuration.md "Credentials"): several named keys per
// application, each with its last use; an operator creates, rotates and revokes them (CLI,
// operator API). A revoked key stops working at once on every node.
import { randomUUID } from 'node:crypto';
import type { AuthenticatedApp } from '../../http/auth.ts';
import { ApiError } from '@boxhub/protocol';
import type { Clock } from '../../clock.ts';
import type { ApiKeyRow } from '../../db/schema.ts';
import { newApiKey, newCallbackSecret, sha256 } from '../../secrets.ts';
import type { ApplicationRepository, KeyLookup, NewApiKey } from './repository.ts';

export interface CreatedApplication {
  id: string;
  name: string;
  api_key: string;
  key_id: string;
  callback_secret: string;
  ess: boolean;
}
export interface CreatedKey {
  id: string;
  app_id: string;
  name: string;
  api_key: string;
}
export interface ApplicationSummary {
  id: string;
  name: string;
  ess: boolean;
  created_at: number;
  active_keys: number;
  devices: number;
}
export const APPLICATION_PAGE_SIZE = 50;
export interface KeyView {
  id: string;
  app_id: string;
  name: string;
  prefix: string;
  created_at: number;
  last_used_at?: number;
  revoked_at?: number;
}

/** The caller of an authenticated request. */

/** last_used_at is written at most this often per key and node (one UPDATE, not one per request). */
export const KEY_USE_PRECISION_MS = 60_000;
const AUTH_CACHE_MAX = 10_000;

export interface ApplicationServiceOptions {
  /**
   * Changes when another process committed to the database (SQLite's data_version). With it,
   * known keys are remembered and the memory is dropped whenever the database changed under
   * this process, so a key revoked by the CLI fails on the very next request. Without it
   * (PostgreSQL: other nodes write, and no cheap signal says so) every request looks its key
   * up, which is exact on every node.
   */
  dataVersion?: () => number;
  onTouchError?: (err: unknown) => void;
}

const keyName = (raw: string): string => {
  const name = raw.trim();
  if (!name || name.length > 100) throw new ApiError('INVALID_PARAMETER', 'key name must be 1-100 characters');
  return name;
};

export class ApplicationService {
  private readonly repo: ApplicationRepository;
  private readonly clock: Clock;
  private readonly o: ApplicationServiceOptions;
  private readonly keyCache = new Map<string, AuthenticatedApp>();
  private cacheVersion: number | undefined;
  /** When this node last wrote last_used_at, per key. */
  private readonly touched = new Map<string, number>();
  constructor(repo: ApplicationRepository, clock: Clock, o: ApplicationServiceOptions = {}) {
    this.repo = repo;
    this.clock = clock;
    this.o = o;
  }

  /** Creates an application with one key named "default"; key and secret are returned once. */
  async create(input: { name: string; ess?: boolean }): Promise<CreatedApplication> {
    const name = input.name.trim();
    if (!name || name.length > 200)
      throw new ApiError('INVALID_PARAMETER', 'application name must be 1-200 characters');
    const id = randomUUID();
    const now = this.clock.now();
    const { key, row } = this.newKey(id, 'default', now);
    const callbackSecret = newCallbackSecret();
    await this.repo.insert(
      {
        id,
        name,
        // Keys live in api_keys; these legacy columns hold a marker (migration 0004).
        api_key_hash: `moved:${id}`,
        api_key_prefix: '',
        callback_secret: callbackSecret,
        previous_callback_secret: null,
        previous_secret_expires_at: null,
        cap_ess: input.ess ? 1 : 0,
        created_at: now,
      },
      row,
    );
    return { id, name, api_key: key, key_id: row.id, callback_secret: callbackSecret, ess: !!input.ess };
  }

  /**
   * The application of a key this node knows to be active, without waiting (SQLite only; see
   * ApplicationServiceOptions.dataVersion); undefined means "look it up" (authenticate).
   */
  authenticateKnown(apiKey: string): AuthenticatedApp | undefined {
    const cached = this.cached(apiKey);
    if (cached) this.touch(cached.key_id, undefined);
    return cached;
  }

  /** The application an active API key belongs to, or undefined. */
  async authenticate(apiKey: string): Promise<AuthenticatedApp | undefined> {
    const cached = this.authenticateKnown(apiKey);
    if (cached) return cached;
    const row = await this.repo.findKeyByHash(sha256(apiKey));
    if (!row || row.revoked_at !== null) return undefined;
    const app = toAuthenticated(row);
    if (this.o.dataVersion) {
      // Only hits are kept (a flood of wrong keys cannot evict good ones); bounded.
      if (this.keyCache.size >= AUTH_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value as string);
      this.keyCache.set(apiKey, app);
    }
    this.touch(app.key_id, row.last_used_at);
    return app;
  }

  /**
   * The application of an API key by the key's id, while the key is active (console sessions
   * reference the key, never hold it: revoking or rotating the key ends them on every node).
   */
  async activeKey(keyId: string): Promise<AuthenticatedApp | undefined> {
    const k = await this.repo.findKey(keyId);
    if (!k || k.revoked_at !== null) return undefined;
    const a = await this.repo.findById(k.app_id);
    return a
      ? { id: a.id, name: a.name, cap_ess: Number(a.cap_ess), created_at: Number(a.created_at), key_id: k.id }
      : undefined;
  }

  private cached(apiKey: string): AuthenticatedApp | undefined {
    if (!this.o.dataVersion) return undefined;
    const v = this.o.dataVersion();
    if (v !== this.cacheVersion) {
      this.keyCache.clear();
      this.cacheVersion = v;
      return undefined;
    }
    return this.keyCache.get(apiKey);
  }

  /** Writes last_used_at when this node has not for a while; never delays the request. */
  private touch(keyId: string, storedLastUse: number | null | undefined): void {
    const now = this.clock.now();
    const last = Math.max(this.touched.get(keyId) ?? 0, storedLastUse ?? 0);
    if (now - last < KEY_USE_PRECISION_MS) return;
    this.touched.set(keyId, now);
    if (this.touched.size > AUTH_CACHE_MAX) this.touched.delete(this.touched.keys().next().value as string);
    this.repo.touchKey(keyId, now, KEY_USE_PRECISION_MS).catch((e: unknown) => this.o.onTouchError?.(e));
  }

  /** Another API key for an application (operator); returned once. */
  async createKey(appId: string, name: string): Promise<CreatedKey> {
    const n = keyName(name);
    if (!(await this.repo.findById(appId))) throw new ApiError('NOT_FOUND', `no application '${appId}'`);
    const { key, row } = this.newKey(appId, n, this.clock.now());
    await this.repo.insertKey(row);
    return { id: row.id, app_id: appId, name: n, api_key: key };
  }

  /** Revokes a key: it fails on the next request, on every node. */
  async revokeKey(keyId: string): Promise<void> {
    const ok = await this.repo.revokeKey(keyId, this.clock.now());
    this.keyCache.clear();
    if (!ok) throw await this.keyProblem(keyId);
  }

  /** Replaces a key by a new one with the same name, at once (the old one stops working). */
  async rotateKey(keyId: string): Promise<CreatedKey> {
    const old = await this.repo.findKey(keyId);
    if (!old) throw new ApiError('NOT_FOUND', `no API key '${keyId}'`);
    const { key, row } = this.newKey(old.app_id, old.name, this.clock.now());
    const ok = await this.repo.replaceKey(keyId, row, this.clock.now());
    this.keyCache.clear();
    if (!ok) throw await this.keyProblem(keyId);
    return { id: row.id, app_id: old.app_id, name: old.name, api_key: key };
  }

  /** Every application of the deployment, newest first (operator). */
  async list(
    page: number,
  ): Promise<{ page: number; page_size: number; total: number; applications: ApplicationSummary[] }> {
    const { total, rows } = await this.repo.list(APPLICATION_PAGE_SIZE, (page - 1) * APPLICATION_PAGE_SIZE);
    return {
      page,
      page_size: APPLICATION_PAGE_SIZE,
      total,
      applications: rows.map((r) => ({
        id: r.id,
        name: r.name,
        ess: r.cap_ess === 1,
        created_at: r.created_at,
        active_keys: r.active_keys,
        devices: r.devices,
      })),
    };
  }

  /** One application (operator); 404 when there is none. */
  async info(appId: string): Promise<{ id: string; name: string; ess: boolean; created_at: number }> {
    const a = await this.repo.findById(appId);
    if (!a) throw new ApiError('NOT_FOUND', `no application '${appId}'`);
    return { id: a.id, name: a.name, ess: Number(a.cap_ess) === 1, created_at: Number(a.created_at) };
  }

  /**
   * Rotates one of this application's own keys (the console's key page). Another application's
   * key answers "not found", exactly like a key that does not exist.
   */
  async rotateOwnKey(appId: string, keyId: string): Promise<CreatedKey> {
    await this.ownKey(appId, keyId);
    return this.rotateKey(keyId);
  }

  /** Revokes one of this application's own keys; another application's key is "not found". */
  async revokeOwnKey(appId: string, keyId: string): Promise<void> {
    await this.ownKey(appId, keyId);
    await this.revokeKey(keyId);
  }

  /** The application a key belongs to (operator); 404 when there is no such key. */
  async keyOwner(keyId: string): Promise<string> {
    const k = await this.repo.findKey(keyId);
    if (!k) throw new ApiError('NOT_FOUND', `no API key '${keyId}'`);
    return k.app_id;
  }

  /** One key as the lists show it; 404 when there is none or, given an application, when it is another's. */
  async key(keyId: string, appId?: string): Promise<KeyView> {
    const k = await this.repo.findKey(keyId);
    if (!k || (appId !== undefined && k.app_id !== appId)) throw new ApiError('NOT_FOUND', `no API key '${keyId}'`);
    return keyView(k);
  }

  private async ownKey(appId: string, keyId: string): Promise<void> {
    const k = await this.repo.findKey(keyId);
    if (!k || k.app_id !== appId) throw new ApiError('NOT_FOUND', `no API key '${keyId}'`);
  }

  async listKeys(appId: string): Promise<KeyView[]> {
    if (!(await this.repo.findById(appId))) throw new ApiError('NOT_FOUND', `no application '${appId}'`);
    return (await this.repo.listKeys(appId)).map(keyView);
  }

  private async keyProblem(keyId: string): Promise<ApiError> {
    const k = await this.repo.findKey(keyId);
    return k
      ? new ApiError('INVALID_PARAMETER', `API key '${keyId}' is revoked already`)
      : new ApiError('NOT_FOUND', `no API key '${keyId}'`);
  }

  private newKey(appId: string, name: string, at: number): { key: string; row: NewApiKey } {
    const key = newApiKey();
    return {
      key,
      row: {
        id: `key-${randomUUID()}`,
        app_id: appId,
        name,
        key_hash: sha256(key),
        key_prefix: key.slice(0, 10),
        created_at: at,
      },
    };
  }
}

function toAuthenticated(r: KeyLookup): AuthenticatedApp {
  return {
    id: r.app_id,
    name: r.name,
    cap_ess: Number(r.cap_ess),
    created_at: Number(r.app_created_at),
    key_id: r.key_id,
  };
}

function keyView(k: ApiKeyRow): KeyView {
  return {
    id: k.id,
    app_id: k.app_id,
    name: k.name,
    prefix: k.key_prefix,
    created_at: Number(k.created_at),
    ...(k.last_used_at !== null ? { last_used_at: Number(k.last_used_at) } : {}),
    ...(k.revoked_at !== null ? { revoked_at: Number(k.revoked_at) } : {}),
  };
}
