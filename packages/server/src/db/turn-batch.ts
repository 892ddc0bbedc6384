// Work asked for by many boxes in the same moment, done once for all of them. When a node comes
// back, thousands of boxes report their presence and state within seconds, and the checks each
// report triggers (device events, rollouts, the fleet's history) were a statement or two per box
// each; a batch does them for every box that reported in one turn of the event loop with one
// statement per check (bench/README.md, "reconnect-storm"). A lone report waits one turn.
//
// `add` resolves once the batch it joined has been run; a batch that throws rejects every caller
// in it (each caller decides whether that matters). Items added while a batch runs go into the
// next one, so a batch never grows while it is being read.

export class TurnBatch<T> {
  private pending: T[] = [];
  private running: Promise<void> | undefined;
  private readonly run: (items: T[]) => Promise<void>;
  private readonly max: number;

  /** `run` gets at most `max` items at a time (the size of an IN list a statement may carry). */
  constructor(run: (items: T[]) => Promise<void>, max = 500) {
    this.run = run;
    this.max = max;
  }

  add(item: T): Promise<void> {
    this.pending.push(item);
    this.running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
    return this.running;
  }

  private async flush(): Promise<void> {
    const items = this.pending;
    this.pending = [];
    this.running = undefined;
    let failed: unknown;
    for (let i = 0; i < items.length; i += this.max) {
      try {
        await this.run(items.slice(i, i + this.max));
      } catch (e) {
        failed ??= e;
      }
    }
    if (failed !== undefined) throw failed;
  }
}
