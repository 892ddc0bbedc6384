// Callback rules (docs/callbacks.md). Features record a callback with `enqueue` inside the same
// transaction as the state change that causes it, so both commit or neither does; the worker
// (./worker.ts) delivers it. At-least-once: a receiver de-duplicates on X-SVC-Callback-ID.
import { randomUUID } from 'node:crypto';
import { ApiError, type api } from '@boxhub/protocol';
import type { Clock } from '../../clock.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import { DELIVER_JOB } from './delivery.ts';
import { newCallbackSecret } from '../../secrets.ts';
import { UrlGuard, urlSyntaxProblem } from '../../net/url-guard.ts';
import type { AttemptRow, CallbackRepository, CallbackRow, Trx } from './repository.ts';
import { transact } from '../../db/transaction.ts';

export const CALLBACK_PAGE_SIZE = 20;
export type CallbackStatus = 'pending' | 'delivered' | 'failed';
export const CALLBACK_STATUSES: readonly CallbackStatus[] = ['pending', 'delivered', 'failed'];

export interface EnqueueInput {
  appId: string;
  /** Checked for syntax here; for the network policy call `checkUrl` when the URL is accepted. */
  url: string;
  method: 'POST' | 'PUT';
  /** Event name, e.g. 'recognition.result', 'scan.finish'; shown in the delivery log. */
  event: string;
  taskUuid?: string;
  /** The JSON body, sent exactly as given (recognition callbacks' bodies are the API's, docs/api.md). */
  body: unknown;
  /** Callback id (X-SVC-Callback-ID); a new UUID by default. */
  id?: string;
  /** Group this callback belongs to, e.g. `recognition:<uuid>:results`. */
  group?: string;
  /** Send only after every callback of this group (same application) has completed
   *  (delivered or finally failed), e.g. the recognition end callback. */
  waitFor?: string;
  /** First attempt not before this time (Unix ms); now by default. */
  notBefore?: number;
}

export interface CallbackServiceSettings {
  allowPrivateNetworks: boolean;
  /** How long the previous secret keeps signing after a rotation. */
  secretGraceMs: number;
}

export class CallbackService {
  private readonly repo: CallbackRepository;
  private readonly clock: Clock;
  private readonly settings: CallbackServiceSettings;
  private readonly jobs: Jobs;
  readonly urlGuard: UrlGuard;

  constructor(
    repo: CallbackRepository,
    jobs: Jobs,
    clock: Clock,
    settings: CallbackServiceSettings,
    urlGuard?: UrlGuard,
  ) {
    this.repo = repo;
    this.jobs = jobs;
    this.clock = clock;
    this.settings = settings;
    this.urlGuard = urlGuard ?? new UrlGuard({ allowPrivateNetworks: settings.allowPrivateNetworks });
  }

  /**
   * Records a callback and its delivery job in the caller's transaction and returns its id.
   * The callback is sent once the transaction commits (never before, never without it).
   */
  async enqueue(trx: Trx, input: EnqueueInput): Promise<string> {
    const problem = urlSyntaxProblem(input.url, Number.MAX_SAFE_INTEGER);
    if (problem) throw new ApiError('INVALID_PARAMETER', `callback URL: ${problem}`);
    if (input.method !== 'POST' && input.method !== 'PUT')
      throw new ApiError('INVALID_PARAMETER', 'callback method must be POST or PUT');
    const id = input.id ?? randomUUID();
    const now = this.clock.now();
    await this.repo.insert(trx, {
      id,
      app_id: input.appId,
      url: input.url,
      method: input.method,
      event: input.event,
      task_uuid: input.taskUuid ?? null,
      body: JSON.stringify(input.body),
      wait_group: input.group ?? null,
      wait_for: input.waitFor ?? null,
      next_attempt_at: input.notBefore ?? now,
      created_at: now,
    });
    await this.jobs.schedule(trx, { kind: DELIVER_JOB, ref: id, runAt: input.notBefore ?? now, fairKey: input.appId });
    return id;
  }

  /** Throws the API error for a URL the service may not call (syntax, length, network policy). */
  async checkUrl(url: string, field = 'callback_url'): Promise<void> {
    const p = await this.urlGuard.check(url);
    if (!p) return;
    if (p.kind === 'blocked') throw new ApiError('URL_NOT_ALLOWED', `${field}: ${p.reason}`);
    throw new ApiError('INVALID_PARAMETER', `${field}: ${p.reason}`);
  }

  /** Sends a `callback.test` event to `url` through the normal outbox. */
  async sendTest(appId: string, url: string): Promise<{ id: string }> {
    await this.checkUrl(url);
    const id = randomUUID();
    await this.enqueue(this.repo.db, {
      appId,
      url,
      method: 'POST',
      event: 'callback.test',
      id,
      body: { event: 'callback.test', id, created_at: this.clock.now() },
    });
    return { id };
  }

  async list(appId: string, q: api.CallbackListQuery): Promise<api.CallbackList> {
    const { total, rows, attempts } = await this.repo.list(
      appId,
      { ...(q.status ? { status: q.status } : {}), ...(q.task_uuid ? { taskUuid: q.task_uuid } : {}) },
      CALLBACK_PAGE_SIZE,
      (q.page - 1) * CALLBACK_PAGE_SIZE,
    );
    const byCallback = new Map<string, AttemptRow[]>();
    for (const a of attempts) byCallback.set(a.callback_id, [...(byCallback.get(a.callback_id) ?? []), a]);
    return {
      page: q.page,
      page_size: CALLBACK_PAGE_SIZE,
      total,
      callbacks: rows.map((r) => view(r, byCallback.get(r.id) ?? [])),
    };
  }

  /** A task's callbacks of one event with their bodies, oldest first (the console's recognition run). */
  async ofTask(
    appId: string,
    taskUuid: string,
    event: string,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; callbacks: Array<{ id: string; status: CallbackStatus; body: unknown }> }> {
    const { total, rows } = await this.repo.ofTask(appId, taskUuid, event, pageSize, (page - 1) * pageSize);
    return {
      total,
      callbacks: rows.map((r) => ({
        id: r.id,
        status: r.status as CallbackStatus,
        body: JSON.parse(r.body) as unknown,
      })),
    };
  }

  /** The delivery status of these callbacks of the application (those the log still keeps). */
  async statuses(appId: string, ids: readonly string[]): Promise<Map<string, CallbackStatus>> {
    return new Map((await this.repo.statuses(appId, ids)).map((r) => [r.id, r.status as CallbackStatus]));
  }

  /** Sends a completed callback again: a new round of attempts, same id and body. */
  async replay(appId: string, id: string): Promise<void> {
    const now = this.clock.now();
    const restarted = await transact(this.repo.db, async (trx) => {
      if (!(await this.repo.restart(trx, appId, id, now))) return false;
      await this.jobs.schedule(trx, { kind: DELIVER_JOB, ref: id, runAt: now, fairKey: appId });
      return true;
    });
    if (restarted) return;
    const row = await this.repo.findForApp(appId, id);
    if (!row) throw new ApiError('NOT_FOUND', `no callback '${id}'`);
    throw new ApiError(
      'CALLBACK_PENDING',
      `callback '${id}' is still being delivered; replay it once it is delivered or failed`,
    );
  }

  /** New signing secret, returned once; the old one signs too until the grace period ends. */
  async rotateSecret(appId: string): Promise<api.RotateSecretResult> {
    const secret = newCallbackSecret();
    const until = this.clock.now() + this.settings.secretGraceMs;
    if (!(await this.repo.rotateSecret(appId, secret, until))) throw new ApiError('NOT_FOUND', 'no such application');
    return { callback_secret: secret, previous_secret_expires_at: until };
  }
}

function view(r: CallbackRow, attempts: AttemptRow[]): api.CallbackView {
  return {
    id: r.id,
    event: r.event,
    url: r.url,
    method: r.method === 'PUT' ? 'PUT' : 'POST',
    ...(r.task_uuid ? { task_uuid: r.task_uuid } : {}),
    status: r.status as CallbackStatus,
    ...(r.wait_for && r.status === 'pending' ? { waiting_for: r.wait_for } : {}),
    created_at: Number(r.created_at),
    ...(r.status === 'pending' ? { next_attempt_at: Number(r.next_attempt_at) } : {}),
    ...(r.completed_at !== null ? { completed_at: Number(r.completed_at) } : {}),
    attempts: attempts.map((a) => ({
      at: Number(a.started_at),
      latency_ms: Number(a.duration_ms),
      ...(a.status_code !== null ? { status_code: Number(a.status_code) } : {}),
      ...(a.error ? { error: a.error } : {}),
    })),
  };
}
