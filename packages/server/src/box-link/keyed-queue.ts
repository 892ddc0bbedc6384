import { laterTurn } from '../loop-budget.ts';

/**
 * Runs tasks one after another per key (per device), concurrently across keys, so a box's
 * "online" is applied before the state it sends right after, without one slow box holding up
 * the others. At most `limit` tasks run at once (first come, first served): a broker's return
 * hands a node every box's will and new session within seconds, and starting them all at once
 * put thousands of statements in line for SQLite's one connection ahead of every API request
 * (bench/README.md, "reconnect-storm").
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly slots: Slots;

  constructor(limit = Number.POSITIVE_INFINITY) {
    this.slots = new Slots(limit);
  }

  run(key: string, task: () => Promise<void>): Promise<void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const slotted = () => this.slots.run(task);
    const next = prev.then(slotted, slotted);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every queued task has finished. */
  async drain(): Promise<void> {
    while (this.tails.size) await Promise.all([...this.tails.values()]);
  }
}

/** At most `limit` tasks at once; the others wait their turn in the order they came. */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  async run(task: () => Promise<void>): Promise<void> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      await task();
    } finally {
      const next = this.waiting.shift();
      // Handed over in a later turn of the event loop, within background work's budget for a
      // turn (db/background-work.ts, laterTurn): a task that finishes without waiting for
      // anything (a retained state the table already holds) would otherwise start the next at
      // once, and a broker's 10,000 of them ran as one turn of 1.2 s (bench/README.md,
      // "reconnect-storm", run 39's profile).
      if (next) laterTurn(next);
      else this.running--;
    }
  }
}
