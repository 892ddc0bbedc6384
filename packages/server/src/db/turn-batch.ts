// Work asked for by many boxes in the same moment, done once for all of them. When a node comes
// back, thousands of boxes report their presence and state within seconds, and the checks each
// report triggers (device events, rollouts, the fleet's history) were a statement or two per box
// each; a batch does them for every box that reported in one turn of the event loop with one
// statement per check (bench/README.md, "reconnect-storm"). A lone report waits one turn.
//
// `add` resolves once the chunk of `max` items it is in has been run, not the whole batch: a
// box's next message waits for its own check, not for the checks of every box that reported in
// the same turn (a broker's return brings 10,000 wills in one read; bench/README.md,
// "reconnect-storm"), and the loop gets a turn between chunks. A chunk that throws rejects its own callers only. Items added while a
// batch runs go into the next one, so a batch never grows while it is being read.

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (e: unknown) => void;
}

/** `R`: what each caller gets back, when `run` returns one result per item, in their order. */
export class TurnBatch<T, R = undefined> {
  private pending: Waiting<T, R>[] = [];
  private scheduled = false;
  /** Returns one result per item unless `R` is undefined; what such a `run` returns is ignored. */
  private readonly run: (items: T[]) => Promise<unknown>;
  private readonly max: number;

  /** `run` gets at most `max` items at a time (the size of an IN list a statement may carry). */
  constructor(run: (items: T[]) => Promise<[R] extends [undefined] ? unknown : R[]>, max = 500) {
    this.run = run;
    this.max = max;
  }

  add(item: T): Promise<R> {
    const done = new Promise<R>((resolve, reject) => this.pending.push({ item, resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    return done;
  }

  private async flush(): Promise<void> {
    const waiting = this.pending;
    this.pending = [];
    this.scheduled = false;
    for (let i = 0; i < waiting.length; i += this.max) {
      // A turn of the event loop between chunks: better-sqlite3 answers at once, so without it a
      // batch of 10,000 ran as one turn and held every HTTP request that came meanwhile.
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const chunk = waiting.slice(i, i + this.max);
      try {
        const results = await this.run(chunk.map((w) => w.item));
        for (const [n, w] of chunk.entries()) w.resolve((Array.isArray(results) ? results[n] : undefined) as R);
      } catch (e) {
        for (const w of chunk) w.reject(e);
      }
    }
  }
}

/** `rows` in one list per key, in the keys' order (a key listed twice gets the same list). */
export function groupBy<T>(keys: string[], rows: T[], keyOf: (row: T) => string): T[][] {
  const by = new Map<string, T[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = by.get(k);
    if (list) list.push(r);
    else by.set(k, [r]);
  }
  return keys.map((k) => by.get(k) ?? []);
}
