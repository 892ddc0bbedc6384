/**
 * Runs tasks one after another per key (per device), concurrently across keys, so a box's
 * "online" is applied before the state it sends right after, without one slow box holding up
 * the others.
 *
 * Bounded, and fair to the rest of the node: at most `concurrency` tasks run at once and at
 * most `perTurn` start in one turn of the event loop. When a broker comes back, 10,000 boxes'
 * retained presence and state (20,000 messages) and then their live ones arrive at once. Run
 * all at once, their statements queued ahead of every API request's on the one SQLite
 * connection, and with SQLite's synchronous driver the whole backlog ran as one promise chain
 * that never let the event loop take a request: the API's p50 was 8.9 s during that storm
 * (bench/README.md, "reconnect-storm", runs 25-26). Here a request waits for at most one turn's
 * tasks. Messages waiting their turn are held in memory, as they were before as pending promises.
 */
export interface KeyedQueueOptions {
  /** Tasks running at once, across keys (default 64). */
  concurrency?: number;
  /** Tasks started in one turn of the event loop (default 16). */
  perTurn?: number;
}

interface Queued {
  task: () => Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class KeyedQueue {
  /** Tasks not started yet, per key; a key is here while it has a task queued or running. */
  private readonly waiting = new Map<string, Queued[]>();
  /** Keys whose next task may start (none of theirs running), oldest first. */
  private readonly ready = new Set<string>();
  private running = 0;
  private scheduled = false;
  private idle: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly perTurn: number;

  constructor(o: KeyedQueueOptions = {}) {
    this.concurrency = o.concurrency ?? 64;
    this.perTurn = o.perTurn ?? 16;
  }

  /** Queues `task` behind the key's earlier ones; settles as the task does. */
  run(key: string, task: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const q = this.waiting.get(key);
      if (q) q.push({ task, resolve, reject });
      else {
        this.waiting.set(key, [{ task, resolve, reject }]);
        this.ready.add(key);
      }
      this.schedule();
    });
  }

  /** Resolves when every queued task has finished. */
  drain(): Promise<void> {
    if (this.waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.ready.size === 0 || this.running >= this.concurrency) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    let started = 0;
    for (const key of this.ready) {
      if (started >= this.perTurn || this.running >= this.concurrency) break;
      this.ready.delete(key);
      const next = this.waiting.get(key)?.shift();
      if (!next) continue; // a ready key always has a task queued (run, settle)
      this.running++;
      started++;
      Promise.resolve()
        .then(next.task)
        .then(next.resolve, next.reject)
        .finally(() => this.settle(key));
    }
    this.schedule();
  }

  private settle(key: string): void {
    this.running--;
    if (this.waiting.get(key)?.length) this.ready.add(key);
    else this.waiting.delete(key);
    if (this.waiting.size === 0) {
      const idle = this.idle;
      this.idle = [];
      for (const done of idle) done();
    }
    this.schedule();
  }
}
