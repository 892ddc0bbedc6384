// Delivers callbacks (docs/callbacks.md) as `callback.deliver` jobs on the shared jobs table
// (jobs/runner.ts): the job's due time is the next attempt, its lease the attempt's timeout
// plus a margin. One HTTP attempt per claim; its outcome (attempt row, new state) is written in
// the transaction that settles the job, so both change together or neither does.
// docs/api.md, "Callbacks": success is HTTP 200 within 5 s; otherwise up to 3 retries
// 8, 13 and 21 s after each failure. Both are settings (config.ts), those the defaults.
// Fairness: claims take a few jobs per application in turn and cap what one application has in
// flight on a node, so one application's backlog never holds up another's callbacks.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { JobRepository, Trx } from '../../jobs/repository.ts';
import type { JobHandler, JobResult } from '../../jobs/runner.ts';
import type { AttemptOutcome, CallbackRepository, CallbackRow } from './repository.ts';
import { signatureHeader } from './signing.ts';
import type { AttemptResult, Transport } from './transport.ts';

export const DELIVER_JOB = 'callback.deliver';
/** A callback waiting for its group looks again this often, besides being woken when a member
 *  of the group completes (that wake is the usual path; this covers a race with its enqueue). */
const WAIT_RECHECK_MS = 30_000;

export interface DeliverySettings {
  timeoutMs: number;
  retryDelaysMs: number[];
  /** Attempts in flight at once per node. */
  concurrency: number;
  /** Attempts of one application in flight at once per node. */
  perApplication: number;
  nodeId: string;
  /** Added to the timeout to form a claim's lease. */
  leaseMarginMs: number;
}

export interface DeliveryMetrics {
  attempt(kind: string, seconds: number): void;
  final(outcome: 'delivered' | 'failed'): void;
}

export interface DeliveryDeps {
  repo: CallbackRepository;
  jobs: JobRepository;
  clock: Clock;
  log: Logger;
  transport: Transport;
  settings: DeliverySettings;
  metrics?: DeliveryMetrics;
}

type Secrets = { current: string; previous: string | null; previousUntil: number | null };
interface Prepared {
  rows: Map<string, CallbackRow>;
  secrets: Map<string, Secrets>;
}
interface Effect {
  outcome: AttemptOutcome;
  row: CallbackRow;
}
/** A waiter that found its group pending: checked again when it is settled (see record). */
interface Waiting {
  waiting: CallbackRow;
}

/** The API's three headers (docs/api.md, "Callbacks") plus the Standard Webhooks ones. */
export function callbackHeaders(
  id: string,
  body: string,
  secrets: string[],
  timestampSec: number,
): Record<string, string> {
  return {
    'user-agent': 'SVC',
    'content-type': 'application/json',
    'x-svc-callback-id': id,
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signatureHeader(secrets, id, timestampSec, body),
  };
}

export function callbackDelivery(d: DeliveryDeps): JobHandler<Prepared, Effect | Waiting> {
  const s = d.settings;
  return {
    kind: DELIVER_JOB,
    concurrency: s.concurrency,
    leaseMs: s.timeoutMs + s.leaseMarginMs,
    fair: { perKey: s.perApplication, perRound: Math.max(1, Math.ceil(s.perApplication / 4)) },

    async prepare(jobs) {
      const rows = await d.repo.pending(jobs.map((j) => j.ref));
      const secrets = await d.repo.secrets([...new Set([...rows.values()].map((r) => r.app_id))]);
      return { rows, secrets };
    },

    async run(job, { signal, prepared }) {
      const row = prepared.rows.get(job.ref);
      // Delivered or failed meanwhile (a replay makes a new job): nothing left to do.
      if (!row) return { next: 'done' };
      if (row.wait_for && (await d.repo.groupPending(row.app_id, row.wait_for))) {
        return { next: 'again', at: d.clock.now() + WAIT_RECHECK_MS, effect: { waiting: row } };
      }
      return attempt(d, row, prepared.secrets.get(row.app_id), signal);
    },

    async record(trx, items) {
      const effects = items.flatMap((i) => (i.result.next === 'release' || !i.result.effect ? [] : [i.result.effect]));
      const outcomes = effects.filter((e): e is Effect => 'outcome' in e);
      await d.repo.recordOutcomes(
        trx,
        outcomes.map((e) => e.outcome),
      );
      await wakeWaiters(d, trx, outcomes);
      // A waiter claimed while the last member of its group completed missed that completion's
      // wake (it only reaches unclaimed jobs): looked at again here, now that it is unclaimed in
      // this transaction, it is made due at once if its group is done by now. Either this sees
      // the completion or the completion's wake sees this job unclaimed.
      const waiting = effects.filter((e): e is Waiting => 'waiting' in e);
      const free: string[] = [];
      for (const w of waiting)
        if (!(await d.repo.groupPending(w.waiting.app_id, w.waiting.wait_for!, trx))) free.push(w.waiting.id);
      if (free.length > 0) await d.jobs.dueNow(trx, DELIVER_JOB, free, d.clock.now());
    },
  };
}

async function attempt(
  d: DeliveryDeps,
  row: CallbackRow,
  sec: Secrets | undefined,
  signal: AbortSignal,
): Promise<JobResult<Effect>> {
  const s = d.settings;
  const startedAt = d.clock.now();
  const keys = sec
    ? [sec.current, ...(sec.previous && (sec.previousUntil ?? 0) > startedAt ? [sec.previous] : [])]
    : [];
  const headers = callbackHeaders(row.id, row.body, keys, Math.floor(startedAt / 1000));
  const t0 = performance.now();
  const r: AttemptResult = await d.transport(
    { url: row.url, method: row.method === 'PUT' ? 'PUT' : 'POST', headers, body: row.body, timeoutMs: s.timeoutMs },
    signal,
  );
  const ms = performance.now() - t0;
  if (r.kind === 'aborted') return { next: 'release' };
  const finishedAt = d.clock.now();
  const ok = r.kind === 'answered' && r.statusCode === 200;
  const retryIndex = Number(row.retry_index);
  const delay = s.retryDelaysMs[retryIndex];
  const status = ok ? 'delivered' : delay === undefined ? 'failed' : 'pending';
  d.metrics?.attempt(ok ? 'ok' : r.kind === 'answered' ? 'http_error' : r.kind, ms / 1000);
  if (status !== 'pending') d.metrics?.final(status);
  // Each retry is counted from the previous failure (docs/callbacks.md, "Delivery guarantees").
  const nextAttemptAt = status === 'pending' ? finishedAt + delay! : finishedAt;
  const outcome: AttemptOutcome = {
    id: row.id,
    status,
    retryIndex: status === 'pending' ? retryIndex + 1 : retryIndex,
    nextAttemptAt,
    completedAt: status === 'pending' ? null : finishedAt,
    attempt: {
      id: randomBytes(12).toString('hex'),
      callback_id: row.id,
      attempt: Number(row.attempts) + 1,
      started_at: startedAt,
      duration_ms: Math.round(ms),
      status_code: r.statusCode,
      error: ok ? null : (r.error ?? `HTTP ${r.statusCode ?? '?'} (expected 200)`).slice(0, 500),
      response: r.response ? r.response.slice(0, 1000) : null,
      node_id: s.nodeId,
    },
  };
  const effect = { outcome, row };
  return status === 'pending' ? { next: 'again', at: nextAttemptAt, effect } : { next: 'done', effect };
}

/** A completed member of a group may unblock the callbacks waiting for that group. */
async function wakeWaiters(d: DeliveryDeps, trx: Trx, effects: readonly Effect[]): Promise<void> {
  const groups = new Map<string, { appId: string; group: string }>();
  for (const e of effects) {
    if (e.outcome.status !== 'pending' && e.row.wait_group)
      groups.set(`${e.row.app_id}\0${e.row.wait_group}`, { appId: e.row.app_id, group: e.row.wait_group });
  }
  if (groups.size === 0) return;
  const waiters = await d.repo.waiters(trx, [...groups.values()]);
  await d.jobs.dueNow(trx, DELIVER_JOB, waiters, d.clock.now());
}
