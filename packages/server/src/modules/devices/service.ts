// Device binding and management rules (docs/api.md, "Device binding", "Devices").
// An application sees only devices bound to it: any other device answers 30002 exactly like
// one that does not exist, except get_uuid and bind, which answer 30003.
import { randomUUID } from 'node:crypto';
import { ApiError, type api, messageOf } from '@boxhub/protocol';
import type { Clock } from '../../clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { newDeviceSecret, sha256 } from '../../secrets.ts';
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database, DeviceRow } from '../../db/schema.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { DeviceRepository } from './repository.ts';
import { toClient } from './view.ts';

export const DEVICE_PAGE_SIZE = 100;

/** A device of the deployment as an operator sees it: the API's Device plus registration facts. */
export interface OperatorDevice {
  client: api.Client;
  model: string;
  app_id: string | null;
  app_name: string | null;
  registered_at: number;
  /** The box's secret was revoked: it cannot log in until the secret is rotated. */
  secret_revoked: boolean;
}

export interface RegisteredDevice {
  uuid: string;
  code: string;
  model: string;
  secret: string;
}

/** Called after a device is provisioned (e.g. to create its broker credentials). */
export type ProvisionHook = (device: { uuid: string; secret: string }) => Promise<void>;

/**
 * What the broker must do when a box's credentials change. An external broker keeps its own
 * logins (Mosquitto dynsec: `provision` replaces one and drops its session, `deprovision`
 * removes it); the embedded broker checks the database at each login and only needs the
 * current session dropped (`disconnect`).
 */
export interface CredentialHooks {
  provision?: ProvisionHook;
  deprovision?: (uuid: string) => Promise<void>;
  disconnect?: (uuid: string) => void;
}

/**
 * Ends what an application had running on a box it unbinds: every such task, or (`createdBefore`)
 * only those created before that time, when the application has bound the box again since.
 */
export type UnbindHook = (appId: string, uuid: string, createdBefore?: number) => Promise<unknown>;

/**
 * The second round of an unbind (DeviceService.unbind) where it could not run inline, ref
 * `<device uuid>/<application id>`: written with the binding's removal, due `UNBOUND_AFTER_MS`
 * later and cancelled once the round ran inline, so a task created while the unbind ran is ended
 * even when a dependency was down: the job is tried again until it can.
 */
export const UNBOUND_JOB = 'device.unbound';
export const UNBOUND_AFTER_MS = 10_000;

/** Stored instead of a hash when a box's secret is revoked: no secret hashes to it. */
export const REVOKED_SECRET = 'revoked';

export class DeviceService {
  private readonly repo: DeviceRepository;
  private readonly clock: Clock;
  private readonly unbindHooks: UnbindHook[] = [];
  /** Where unbind schedules its second round; absent for the operator's offline commands (admin.ts), which never unbind. */
  private readonly jobs: Pick<Jobs, 'schedule' | 'cancel' | 'db'> | undefined;
  private readonly log: Pick<Logger, 'warn'> | undefined;
  constructor(
    repo: DeviceRepository,
    clock: Clock,
    o: { jobs?: Pick<Jobs, 'schedule' | 'cancel' | 'db'>; log?: Pick<Logger, 'warn'> } = {},
  ) {
    this.repo = repo;
    this.clock = clock;
    this.jobs = o.jobs;
    this.log = o.log;
  }

  /** Provisions a box (operator action). The secret is returned once; only its hash is kept. */
  async register(input: { code: string; model: string }, provision?: ProvisionHook): Promise<RegisteredDevice> {
    const code = input.code.trim();
    const model = input.model.trim();
    if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(code))
      throw new ApiError('INVALID_PARAMETER', 'device code must be 1-64 characters of A-Z a-z 0-9 _ . : -');
    if (!model || model.length > 64) throw new ApiError('INVALID_PARAMETER', 'device model must be 1-64 characters');
    const taken = () => new ApiError('INVALID_PARAMETER', `a device with code '${code}' is already registered`);
    if (await this.repo.findByCode(code)) throw taken();
    const uuid = randomUUID();
    const secret = newDeviceSecret();
    // Row first, broker login second: a failed login removes the row, so neither half is left
    // behind (a login without a row would be a credential nobody can see or revoke).
    try {
      await this.repo.insert({
        uuid,
        code,
        model,
        secret_hash: sha256(secret),
        app_id: null,
        name: null,
        remark: null,
        active_at: null,
        online: 0,
        session: null,
        ended_session: null,
        last_connect_at: null,
        last_disconnect_at: null,
        state: null,
        state_at: null,
        last_power_ink_flush_at: null,
        created_at: this.clock.now(),
      });
    } catch (e) {
      // The check above and this insert race with another registration of the same code; the
      // unique index on devices.code decides, and the loser gets the same answer as the check.
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
    if (provision) {
      try {
        await provision({ uuid, secret });
      } catch (e) {
        await this.repo.delete(uuid);
        throw e;
      }
    }
    return { uuid, code, model, secret };
  }

  /**
   * A new secret for a box (operator), returned once; the old one stops working at once: the
   * broker's login is replaced first (fail closed: if that fails nothing changed), then the
   * database, then the open session is dropped.
   */
  async rotateSecret(uuid: string, hooks: CredentialHooks = {}): Promise<RegisteredDevice> {
    const d = await this.repo.findByUuid(uuid);
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${uuid}'`);
    const secret = newDeviceSecret();
    await hooks.provision?.({ uuid, secret });
    if (!(await this.repo.setSecretHash(uuid, sha256(secret))))
      throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${uuid}'`);
    hooks.disconnect?.(uuid);
    return { uuid, code: d.code, model: d.model, secret };
  }

  /**
   * Revokes a box's secret (operator): no login works until the secret is rotated; the open
   * session is dropped. Revoking twice is not an error (a retry after a broker failure).
   */
  async revokeSecret(uuid: string, hooks: CredentialHooks = {}): Promise<void> {
    if (!(await this.repo.setSecretHash(uuid, REVOKED_SECRET)))
      throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${uuid}'`);
    try {
      await hooks.deprovision?.(uuid);
    } catch (e) {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `the secret is revoked in the database, but the broker could not remove the login (${messageOf(e)}); revoke again`,
      );
    }
    hooks.disconnect?.(uuid);
  }

  /** A registered box's code and model (operator lookup: no application involved). */
  async registered(uuid: string): Promise<{ uuid: string; code: string; model: string }> {
    const d = await this.repo.findByUuid(uuid);
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${uuid}'`);
    return { uuid: d.uuid, code: d.code, model: d.model };
  }

  /** The uuid of a registered box (operator lookup: no application involved). */
  async uuidOf(code: string): Promise<string> {
    const d = await this.repo.findByCode(code);
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with code '${code}'`);
    return d.uuid;
  }

  async getUuid(appId: string, code: string): Promise<string> {
    const d = await this.repo.findByCode(code);
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with code '${code}'`);
    if (d.app_id !== null && d.app_id !== appId)
      throw new ApiError('DEVICE_ALREADY_BOUND', 'device is bound by another application');
    return d.uuid;
  }

  async bind(appId: string, body: api.BindBody): Promise<void> {
    if (await this.repo.bind(body.uuid, appId, body.name, body.remark ?? null, this.clock.now())) return;
    const d = await this.repo.findByUuid(body.uuid);
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${body.uuid}'`);
    throw new ApiError(
      'DEVICE_ALREADY_BOUND',
      d.app_id === appId ? 'device is already bound by this application' : 'device is bound by another application',
    );
  }

  /** What ends with a binding: the application's tasks on the box (tasks/lifecycle.ts). */
  onUnbind(end: UnbindHook): void {
    this.unbindHooks.push(end);
  }

  /**
   * Unbinds, ending the application's tasks on the box (docs/tasks.md, "Ownership ends with the
   * binding"): before the binding goes, so a failure leaves the box bound and the call can be
   * repeated; and again after, for a task created while this ran (its create committed after the
   * first round read), before answering. Once the binding is gone the call has succeeded: where
   * that second round fails (a dependency down), the caller told to retry would meet 30002 (the
   * chaos soak), so the `device.unbound` job written with the binding's removal runs it instead.
   */
  async unbind(appId: string, uuid: string): Promise<void> {
    if (!this.jobs) throw new Error('unbind needs the jobs table (DeviceService built without it)');
    const jobs = this.jobs;
    await this.bound(appId, uuid);
    for (const end of this.unbindHooks) await end(appId, uuid);
    const ref = `${uuid}/${appId}`;
    const later = (trx: Transaction<Database>) =>
      jobs.schedule(trx, { kind: UNBOUND_JOB, ref, runAt: this.clock.now() + UNBOUND_AFTER_MS });
    if (!(await this.repo.unbind(uuid, appId, later))) throw notFound(uuid);
    try {
      for (const end of this.unbindHooks) await end(appId, uuid);
      // Ran: every task of the application's there has ended, also any an earlier unbind's job was for.
      await jobs.cancel(jobs.db, UNBOUND_JOB, ref);
    } catch (err) {
      this.log?.warn({ err, device: uuid }, 'unbound, but its tasks could not all be ended yet: the job will end them');
    }
  }

  /**
   * The unbind's second round: ends the application's tasks on the box. When the application has
   * bound the box again since, only the tasks created before that binding are the old one's.
   * A failure throws: the job is tried again when its lease ends.
   */
  unboundHandler(): JobHandler {
    return {
      kind: UNBOUND_JOB,
      concurrency: 4,
      leaseMs: 30_000,
      run: async (job) => {
        const cut = job.ref.indexOf('/');
        const uuid = job.ref.slice(0, cut);
        const appId = job.ref.slice(cut + 1);
        const d = await this.repo.findByUuid(uuid);
        const rebound = d?.app_id === appId ? (d.active_at ?? undefined) : undefined;
        for (const end of this.unbindHooks) await end(appId, uuid, rebound);
        return { next: 'done' };
      },
    };
  }

  async edit(appId: string, body: api.EditBody): Promise<void> {
    if (!(await this.repo.edit(body.uuid, appId, body.name, body.remark))) throw notFound(body.uuid);
  }

  async info(appId: string, uuid: string): Promise<api.Client> {
    return toClient(await this.bound(appId, uuid));
  }

  async list(appId: string, page: number) {
    const { total, rows } = await this.repo.list(appId, DEVICE_PAGE_SIZE, (page - 1) * DEVICE_PAGE_SIZE);
    return { page, page_size: DEVICE_PAGE_SIZE, total, clients: rows.map(toClient) };
  }

  /** Every device of the deployment, bound or not, newest first (operator). */
  async listAll(page: number): Promise<{ page: number; page_size: number; total: number; devices: OperatorDevice[] }> {
    const { total, rows } = await this.repo.listAll(DEVICE_PAGE_SIZE, (page - 1) * DEVICE_PAGE_SIZE);
    return {
      page,
      page_size: DEVICE_PAGE_SIZE,
      total,
      devices: rows.map((r) => ({
        client: toClient(r),
        model: r.model,
        app_id: r.app_id,
        app_name: r.app_name,
        registered_at: Number(r.created_at),
        secret_revoked: r.secret_hash === REVOKED_SECRET,
      })),
    };
  }

  /** The device if it is bound to this application; 30002 otherwise. */
  async bound(appId: string, uuid: string): Promise<DeviceRow> {
    const d = await this.repo.findBound(uuid, appId);
    if (d) return d;
    // A registered box no application has bound yet: the fix is to bind it (docs/errors.md,
    // 30002). A box bound to another application stays "no device" to this one.
    const any = await this.repo.findByUuid(uuid);
    if (any && any.app_id === null) {
      throw new ApiError(
        'DEVICE_NOT_FOUND',
        `device '${uuid}' is registered but not bound to this application: bind it first (POST /api/client/bind with {"uuid":"${uuid}","name":"…"}, README "Quick start")`,
      );
    }
    throw notFound(uuid);
  }
}

const notFound = (uuid: string) => new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${uuid}'`);
