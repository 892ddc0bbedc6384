// Runs the delayed work of every feature from the one jobs table (docs/jobs.md). Each node runs
// one runner; nodes share the table:
//   claim due jobs per kind (a lease: run_at := now + the kind's lease, under a claim token)
//   → the kind's handler works on each → outcomes settled in batches, each with its effects in
//     the same transaction, and only while the claim still holds → repeat.
// The runner is woken at once by scheduling in this process and by its own completions, sleeps
// on the injected clock until the earliest due job otherwise, and never longer than the poll
// interval, which covers jobs scheduled by other nodes and leases of nodes that died.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../clock.ts';
import type { JobRepository, JobRow, Settle, Trx } from './repository.ts';
import { transact } from '../db/transaction.ts';

export interface ClaimedJob {
  id: string;
  kind: string;
  ref: string;
  fairKey: string | null;
  payload: string | null;
  /** Claims so far, this one included. */
  attempts: number;
  token: string;
  leaseUntil: number;
}

/** Writes what a finished job changed, in the transaction that settles the job. */
export type Effect = (trx: Trx) => Promise<void>;

export type JobResult<E = Effect> =
  | { next: 'done'; effect?: E }
  | { next: 'again'; at: number; payload?: string | null; effect?: E }
  /** Not worked on (the node is stopping): due again at once for another node. */
  | { next: 'release' };

export interface JobHandler<P = unknown, E = Effect> {
  kind: string;
  /** Jobs of this kind in flight at once on a node. */
  concurrency: number;
  /** How long a claim lasts; a job still unsettled by then may be claimed by another node. */
  leaseMs: number;
  /** Share capacity fairly between fair keys: at most `perKey` in flight per key on a node,
   *  and at most `perRound` per key in one claim, so one key's backlog cannot starve others. */
  fair?: { perKey: number; perRound: number };
  /** Loads what a batch of claimed jobs needs in one go (e.g. their records). */
  prepare?(jobs: readonly ClaimedJob[]): Promise<P>;
  run(job: ClaimedJob, ctx: { signal: AbortSignal; prepared: P }): Promise<JobResult<E>>;
  /** Writes the effects of a batch (default: each effect, a function of the transaction). */
  record?(trx: Trx, items: ReadonlyArray<{ job: ClaimedJob; result: JobResult<E> }>): Promise<void>;
}

export interface JobRunnerSettings {
  pollMs: number;
  /** Claims per query. */
  batchSize?: number;
  /** How long stop() waits for the work in flight (after aborting it) and for the last writes. */
  stopWaitMs?: number;
}

interface InFlight {
  job: ClaimedJob;
  ac: AbortController;
  done: Promise<void>;
}
interface Finished {
  job: ClaimedJob;
  result: JobResult<unknown>;
}

// Handlers are stored without their type parameters: each is only ever called with its own jobs.
type AnyHandler = JobHandler<unknown, unknown>;

export class JobRunner {
  private readonly repo: JobRepository;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly s: Required<JobRunnerSettings>;
  private readonly handlers = new Map<string, AnyHandler>();
  private readonly inFlight = new Map<string, InFlight>();
  private finished: Finished[] = [];
  private timer: Timer | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private wakeQueued = false;
  /** Second wakes of scheduled() still to come. */
  private rewakes = 0;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private stopped = true;

  constructor(repo: JobRepository, clock: Clock, log: Logger, settings: JobRunnerSettings) {
    this.repo = repo;
    this.clock = clock;
    this.log = log;
    this.s = { batchSize: 200, stopWaitMs: 5000, ...settings };
  }

  register<P, E>(h: JobHandler<P, E>): void {
    if (this.handlers.has(h.kind)) throw new Error(`a handler for job kind '${h.kind}' is registered already`);
    this.handlers.set(h.kind, h as unknown as AnyHandler);
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Jobs in flight on this node (all kinds, or one). */
  busy(kind?: string): number {
    if (!kind) return this.inFlight.size;
    let n = 0;
    for (const f of this.inFlight.values()) if (f.job.kind === kind) n++;
    return n;
  }

  /** Resolves once the runner has nothing queued, no claim running and nothing left to settle
   *  (work in flight may continue). Tests use it after moving a ManualClock, to see that what
   *  is due has been claimed and what is not has not. */
  async quiet(o: { inFlight?: boolean } = {}): Promise<void> {
    // With `inFlight`, also until every job claimed has been worked on and settled (for tests
    // whose jobs cannot hang: a silent callback receiver would hold this forever).
    const still = () =>
      this.wakeQueued ||
      this.cycle !== undefined ||
      this.flushing !== undefined ||
      this.finished.length > 0 ||
      this.rewakes > 0 ||
      (o.inFlight === true && this.inFlight.size > 0);
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      await new Promise<void>((r) => setTimeout(r, 2));
      // Quiet twice in a row: a completion's wake is queued with setImmediate after the flush.
      if (!still()) {
        await new Promise<void>((r) => setImmediate(r));
        if (!still()) return;
      }
    }
    throw new Error(`job runner did not become quiet within 30 s (${this.inFlight.size} in flight)`);
  }

  /** Look for due work. Wakes in one turn of the event loop are coalesced, so a burst of
   *  completions makes one claim of many jobs, not many claims of one. */
  wake(): void {
    if (this.stopped || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      this.wakeNow();
    });
  }

  /** Wakes now and again shortly: a job scheduled inside a transaction is visible only once the
   *  caller commits, which is usually within this delay; the poll covers anything slower. */
  scheduled(): void {
    this.wake();
    this.rewakes++;
    const t = setTimeout(() => {
      this.rewakes--;
      this.wake();
    }, 25);
    t.unref();
  }

  /** Stops claiming, aborts the work in flight and settles it (released jobs are due at once for
   *  another node or the restart). A database that no longer answers does not hold up the stop. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timer?.cancel();
    if (!(await settlesWithin(this.cycle, this.s.stopWaitMs))) {
      this.log.warn('job runner: a claim did not finish; stopping without it');
      return;
    }
    for (const f of this.inFlight.values()) f.ac.abort(new Error('server stopping'));
    await settlesWithin(Promise.all([...this.inFlight.values()].map((f) => f.done)), this.s.stopWaitMs);
    if (!(await settlesWithin(this.flush(), this.s.stopWaitMs)))
      this.log.warn('job runner: settling did not finish; stopping without it');
  }

  private wakeNow(): void {
    if (this.stopped) return;
    if (this.cycle) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.timer = undefined;
    this.cycle = this.runCycle()
      .catch((err: unknown) => {
        this.log.error({ err }, 'job runner: claiming failed; trying again after the poll interval');
        this.sleep(this.s.pollMs);
      })
      .finally(() => {
        this.cycle = undefined;
        if (this.again) {
          this.again = false;
          this.wakeNow();
        }
      });
  }

  private sleep(ms: number): void {
    if (this.stopped) return;
    this.timer?.cancel();
    // When the next job falls due is a matter of the service's clock; work that another node
    // schedules, or a transaction that commits after scheduled()'s second wake, is found by the
    // poll, which is a matter of real time. (On an injected clock that nobody moves, a poll on
    // that clock never came, and a late commit waited for the next move.)
    const wake = () => {
      this.timer = undefined;
      this.wake();
    };
    const due = this.clock.setTimer(wake, ms);
    const poll = setTimeout(wake, this.s.pollMs);
    poll.unref();
    this.timer = {
      cancel: () => {
        due.cancel();
        clearTimeout(poll);
      },
    };
  }

  private async runCycle(): Promise<void> {
    // Only the kinds with something due are claimed (one probe statement for all kinds).
    const open = [...this.handlers.values()].filter((h) => this.busy(h.kind) < h.concurrency);
    const earliest = await this.repo.earliestByKind(open.map((h) => h.kind));
    const start = this.clock.now();
    let claimed = false;
    for (const h of open) {
      const due = earliest.get(h.kind);
      if (due === undefined || due > start) continue;
      for (;;) {
        if (this.stopped) return;
        const free = h.concurrency - this.busy(h.kind);
        if (free <= 0) break;
        const limit = Math.min(free, this.s.batchSize);
        const now = this.clock.now();
        const token = randomBytes(12).toString('hex');
        const leaseUntil = now + h.leaseMs;
        const rows = await this.repo.claim({
          kind: h.kind,
          now,
          leaseUntil,
          token,
          limit,
          held: this.overdue(h.kind, now),
          ...(h.fair ? { fair: { perRound: h.fair.perRound, ...this.keyLoad(h.kind, h.fair) } } : {}),
        });
        if (this.stopped) {
          // Claimed while stopping: give them straight back.
          await this.repo.settle(
            this.repo.db,
            rows.map((r) => ({ id: r.id, token, next: { kind: 'release', at: now } })),
          );
          return;
        }
        if (rows.length > 0) {
          claimed = true;
          await this.launch(h, rows, token, leaseUntil);
        }
        // A fair claim takes only a few per key: claim again while it still finds work.
        if (h.fair ? rows.length === 0 : rows.length < limit) break;
      }
    }
    // Kinds at capacity are woken by their own completions; the others sleep until their next
    // due job, at most the poll interval.
    const stillOpen = [...this.handlers.values()].filter((h) => this.busy(h.kind) < h.concurrency).map((h) => h.kind);
    // Nothing claimed: the first probe still holds (what was scheduled since wakes the runner).
    let next: number | undefined;
    if (claimed) next = await this.repo.nextDue(stillOpen);
    else
      for (const k of stillOpen) {
        const t = earliest.get(k);
        if (t !== undefined && (next === undefined || t < next)) next = t;
      }
    const now = this.clock.now();
    if (next !== undefined && next <= now) {
      // Due but not claimed: another node's claim holds it for a moment (or it fell due while
      // this cycle ran). That is a matter of real time, not of the service's clock.
      this.timer?.cancel();
      const t = setTimeout(() => this.wake(), 5);
      t.unref();
      this.timer = { cancel: () => clearTimeout(t) };
      return;
    }
    this.sleep(next === undefined ? this.s.pollMs : Math.min(this.s.pollMs, next - now));
  }

  /** Jobs this node still works on although their lease ran out (a slow machine): kept out of
   *  its own claims, or it would work on them twice. Usually none, so the claim statement stays
   *  the cached one. */
  private overdue(kind: string, now: number): string[] {
    const ids: string[] = [];
    for (const [id, f] of this.inFlight) if (f.job.kind === kind && f.job.leaseUntil <= now) ids.push(id);
    return ids;
  }

  /** Keys with work in flight on this node, and those that could pass their per-node limit
   *  with one more round. */
  private keyLoad(kind: string, fair: { perKey: number; perRound: number }): { busy: string[]; saturated: string[] } {
    const perKey = new Map<string, number>();
    for (const f of this.inFlight.values()) {
      if (f.job.kind === kind && f.job.fairKey !== null)
        perKey.set(f.job.fairKey, (perKey.get(f.job.fairKey) ?? 0) + 1);
    }
    const saturated: string[] = [];
    for (const [k, n] of perKey) if (n + fair.perRound > fair.perKey) saturated.push(k);
    return { busy: [...perKey.keys()].filter((k) => !saturated.includes(k)), saturated };
  }

  private async launch(h: AnyHandler, rows: JobRow[], token: string, leaseUntil: number): Promise<void> {
    const jobs: ClaimedJob[] = rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      ref: r.ref,
      fairKey: r.fair_key,
      payload: r.payload,
      attempts: Number(r.attempts),
      token,
      leaseUntil,
    }));
    let prepared: unknown;
    try {
      prepared = h.prepare ? await h.prepare(jobs) : undefined;
    } catch (err) {
      // The claims lapse and the jobs are tried again after their lease.
      this.log.error({ err, kind: h.kind }, 'job runner: preparing jobs failed');
      return;
    }
    for (const job of jobs) {
      const ac = new AbortController();
      const entry: InFlight = { job, ac, done: Promise.resolve() };
      this.inFlight.set(job.id, entry);
      entry.done = (async () => {
        let result: JobResult<unknown>;
        try {
          result = await h.run(job, { signal: ac.signal, prepared });
        } catch (err) {
          // A handler that throws leaves its job claimed: it is tried again after the lease.
          this.log.error({ err, kind: job.kind, ref: job.ref }, 'job failed; it is tried again when its lease ends');
          return;
        }
        this.finished.push({ job, result });
        await this.flush();
      })().finally(() => {
        this.inFlight.delete(job.id);
        this.wake();
      });
    }
  }

  /** Settles the finished jobs in one transaction per turn of the event loop; concurrent
   *  callers join the next batch. */
  private flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      // Outcomes of one turn share a transaction: they arrive one per I/O event, and a
      // transaction each held SQLite to ~1,400 callbacks/s (batches give ~2,000+; bench/callbacks).
      await new Promise((r) => setImmediate(r));
      do {
        this.flushAgain = false;
        const batch = this.finished;
        this.finished = [];
        if (batch.length === 0) continue;
        try {
          await this.settleBatch(batch);
        } catch (err) {
          // The jobs stay claimed; when their lease ends they are worked on again (at least once).
          this.log.error({ err, count: batch.length }, 'job runner: settling jobs failed');
        }
      } while (this.flushAgain || this.finished.length > 0);
    })().finally(() => {
      this.flushing = undefined;
      this.wake();
    });
    return this.flushing;
  }

  private async settleBatch(batch: Finished[]): Promise<void> {
    const now = this.clock.now();
    const settles: Settle[] = batch.map(({ job, result }) => ({
      id: job.id,
      token: job.token,
      next:
        result.next === 'done'
          ? { kind: 'done' }
          : result.next === 'again'
            ? { kind: 'again', at: result.at, ...(result.payload !== undefined ? { payload: result.payload } : {}) }
            : { kind: 'release', at: now },
    }));
    await transact(this.repo.db, async (trx) => {
      const held = await this.repo.settle(trx, settles);
      const byKind = new Map<string, Finished[]>();
      for (const f of batch) {
        if (!held.has(f.job.id)) {
          if (f.result.next !== 'release')
            this.log.warn(
              { kind: f.job.kind, ref: f.job.ref },
              'job outcome dropped: its lease ran out and another node took it over',
            );
          continue;
        }
        if (f.result.next === 'release' || f.result.effect === undefined) continue;
        const list = byKind.get(f.job.kind) ?? [];
        list.push(f);
        byKind.set(f.job.kind, list);
      }
      for (const [kind, items] of byKind) {
        const h = this.handlers.get(kind);
        if (!h) throw new Error(`no handler for job kind '${kind}'`);
        if (h.record) await h.record(trx, items);
        else for (const i of items) await (i.result as { effect: Effect }).effect(trx);
      }
    });
  }
}

/** True when `p` (if any) settles within `ms` (real time: this bounds a shutdown). */
async function settlesWithin(p: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!p) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
