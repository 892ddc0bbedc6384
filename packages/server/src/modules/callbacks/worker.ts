// Delivers the outbox (docs/callbacks.md). Each node runs one worker; they share the table:
//   claim due rows (a lease: next_attempt_at := now + timeout + margin, with a claim token)
//   → one HTTP attempt each → outcomes written in batches (attempt row + new state) → repeat.
// The worker is woken at once by an enqueue in this process and by its own completions, sleeps
// until the earliest due row otherwise, and never longer than the poll interval, which covers
// rows enqueued or released by other nodes and rows left claimed by a node that died.
// Spec "Recognition result callback": success is HTTP 200 within 5 s; otherwise up to 3 retries
// 8, 13 and 21 s after each failure. Both are settings (config.ts), the defaults the spec's.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { AttemptOutcome, CallbackRepository, CallbackRow } from './repository.ts';
import { signatureHeader } from './signing.ts';
import type { AttemptResult, Transport } from './transport.ts';

export interface CallbackWorkerSettings {
  timeoutMs: number;
  retryDelaysMs: number[];
  pollMs: number;
  concurrency: number;
  nodeId: string;
  /** Added to the timeout to form a claim's lease. */
  leaseMarginMs?: number;
  /** Rows claimed per query. */
  batchSize?: number;
}

export interface CallbackWorkerMetrics {
  attempt(kind: string, seconds: number): void;
  final(outcome: 'delivered' | 'failed'): void;
}

export interface CallbackWorkerDeps {
  repo: CallbackRepository;
  clock: Clock;
  log: Logger;
  transport: Transport;
  settings: CallbackWorkerSettings;
  metrics?: CallbackWorkerMetrics;
}

/** The spec's three headers plus the Standard Webhooks ones. */
export function callbackHeaders(id: string, body: string, secrets: string[], timestampSec: number): Record<string, string> {
  return {
    'user-agent': 'SVC',
    'content-type': 'application/json',
    'x-svc-callback-id': id,
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signatureHeader(secrets, id, timestampSec, body),
  };
}

export class CallbackWorker {
  private readonly d: CallbackWorkerDeps;
  private readonly s: Required<CallbackWorkerSettings>;
  private readonly inFlight = new Map<string, { token: string; leaseUntil: number; ac: AbortController; done: Promise<void> }>();
  private results: AttemptOutcome[] = [];
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private stopped = true;
  private released: { id: string; claimToken: string }[] = [];

  constructor(deps: CallbackWorkerDeps) {
    this.d = deps;
    this.s = { leaseMarginMs: 10_000, batchSize: 200, ...deps.settings };
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  private wakeQueued = false;

  /** Look for due work (an enqueue, a completion, a timer). Wakes in one turn of the event
   *  loop are coalesced, so a burst of completions makes one claim of many rows, not many of one. */
  wake(): void {
    if (this.stopped || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => { this.wakeQueued = false; this.wakeNow(); });
  }

  private wakeNow(): void {
    if (this.stopped) return;
    if (this.cycle) { this.again = true; return; }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.cycle = this.runCycle()
      .catch((err: unknown) => {
        this.d.log.error({ err }, 'callback worker cycle failed');
        this.sleep(this.s.pollMs);
      })
      .finally(() => {
        this.cycle = undefined;
        if (this.again) { this.again = false; this.wakeNow(); }
      });
  }

  /** Stops claiming, aborts attempts in flight and gives their rows back for another node or a restart. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    // A cycle stuck on an unreachable database (pg-pool never settles a connect() queued when
    // the pool ends; a partitioned server can hold a query for minutes) must not hold up
    // shutdown: wait at most one attempt's timeout, then leave it. Its rows stay claimed and
    // another node or the restart takes them up when the lease ends (at-least-once).
    if (!(await settlesWithin(this.cycle, this.s.timeoutMs))) {
      this.d.log.warn('callback worker: a claim cycle did not finish; stopping without it');
      return;
    }
    for (const f of this.inFlight.values()) f.ac.abort(new Error('server stopping'));
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
    if (!(await settlesWithin(this.flush(), this.s.timeoutMs))) {
      this.d.log.warn('callback worker: recording outcomes did not finish; stopping without it');
      return;
    }
    if (this.released.length) await this.d.repo.release(this.released, this.d.clock.now()).catch(() => undefined);
  }

  get busy(): number { return this.inFlight.size; }

  private sleep(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), Math.max(0, ms));
  }

  private async runCycle(): Promise<void> {
    for (;;) {
      const free = this.s.concurrency - this.inFlight.size;
      if (free <= 0) return; // a finishing attempt wakes the worker
      const limit = Math.min(free, this.s.batchSize);
      const now = this.d.clock.now();
      const token = randomBytes(12).toString('hex');
      const leaseUntil = now + this.s.timeoutMs + this.s.leaseMarginMs;
      const rows = await this.d.repo.claim(now, leaseUntil, token, limit, this.overdue(now));
      if (this.stopped) { this.released.push(...rows.map((r) => ({ id: r.id, claimToken: token }))); return; }
      if (rows.length > 0) await this.launch(rows, token, leaseUntil);
      if (rows.length < limit) break;
    }
    const next = await this.d.repo.nextDue();
    const now = this.d.clock.now();
    // A due row that could not be claimed is locked by another node's claim for a moment.
    this.sleep(next === undefined ? this.s.pollMs : Math.min(this.s.pollMs, Math.max(next - now, next <= now ? 5 : 0)));
  }

  /**
   * Rows this node still works on although their lease is over (a slow machine: the attempt
   * started late or its outcome is not written yet). They are kept out of this node's claims,
   * or it would attempt them twice. Usually none, so the claim statement stays the cached one.
   * inFlight holds a row until its outcome is written (attempt() awaits the flush).
   */
  private overdue(now: number): string[] {
    const ids: string[] = [];
    for (const [id, e] of this.inFlight) if (e.leaseUntil <= now) ids.push(id);
    return ids;
  }

  private async launch(rows: CallbackRow[], token: string, leaseUntil: number): Promise<void> {
    const secrets = await this.d.repo.secrets([...new Set(rows.map((r) => r.app_id))]);
    for (const row of rows) {
      const ac = new AbortController();
      const entry = { token, leaseUntil, ac, done: Promise.resolve() };
      this.inFlight.set(row.id, entry);
      entry.done = this.attempt(row, token, ac.signal, secrets.get(row.app_id))
        .catch((err: unknown) => this.d.log.error({ err, callback: row.id }, 'callback attempt crashed'))
        .finally(() => { this.inFlight.delete(row.id); this.wake(); });
    }
  }

  private async attempt(row: CallbackRow, token: string, signal: AbortSignal, sec: { current: string; previous: string | null; previousUntil: number | null } | undefined): Promise<void> {
    const startedAt = this.d.clock.now();
    const keys = sec ? [sec.current, ...(sec.previous && (sec.previousUntil ?? 0) > startedAt ? [sec.previous] : [])] : [];
    const headers = callbackHeaders(row.id, row.body, keys, Math.floor(startedAt / 1000));
    const t0 = performance.now();
    const r: AttemptResult = await this.d.transport(
      { url: row.url, method: row.method === 'PUT' ? 'PUT' : 'POST', headers, body: row.body, timeoutMs: this.s.timeoutMs }, signal);
    const ms = performance.now() - t0;
    if (r.kind === 'aborted') { this.released.push({ id: row.id, claimToken: token }); return; }
    const finishedAt = this.d.clock.now();
    const ok = r.kind === 'answered' && r.statusCode === 200;
    const retryIndex = Number(row.retry_index);
    const delay = this.s.retryDelaysMs[retryIndex];
    const status = ok ? 'delivered' : delay === undefined ? 'failed' : 'pending';
    this.d.metrics?.attempt(ok ? 'ok' : r.kind === 'answered' ? 'http_error' : r.kind, ms / 1000);
    if (status !== 'pending') this.d.metrics?.final(status);
    this.results.push({
      id: row.id,
      claimToken: token,
      status,
      retryIndex: status === 'pending' ? retryIndex + 1 : retryIndex,
      // Spec: each retry is counted from the previous failure.
      nextAttemptAt: status === 'pending' ? finishedAt + delay! : finishedAt,
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
        node_id: this.s.nodeId,
      },
    });
    await this.flush();
  }

  /** Writes collected outcomes in one transaction; concurrent callers join the next batch. */
  private flush(): Promise<void> {
    if (this.flushing) { this.flushAgain = true; return this.flushing; }
    this.flushing = (async () => {
      // Outcomes of one turn of the event loop share one transaction: answers arrive one per
      // I/O event, and a transaction per outcome held SQLite to ~1,400 deliveries/s (batches
      // of ~30 give ~2,000-2,250/s on the same machine; bench/callbacks).
      await new Promise((r) => setImmediate(r));
      do {
        this.flushAgain = false;
        const batch = this.results;
        this.results = [];
        if (batch.length === 0) continue;
        try {
          await this.d.repo.complete(batch);
        } catch (err) {
          // The rows stay claimed; when the lease ends another attempt is made (at-least-once).
          this.d.log.error({ err, count: batch.length }, 'recording callback outcomes failed');
        }
      } while (this.flushAgain || this.results.length > 0);
    })().finally(() => { this.flushing = undefined; this.wake(); });
    return this.flushing;
  }
}

/** True when `p` (if any) settles within `ms`. */
async function settlesWithin(p: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!p) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); timer.unref?.(); });
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
