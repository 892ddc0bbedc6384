// The part `--printer auto` and `--scanner auto` share (docs/printers-and-scanners.md, "Plug
// and play"): look for a device, drive the one found, and when it stops answering look again
// (not more often than every rediscoverMs) so that a device that comes back elsewhere (a new
// port after a replug, another USB printer plugged in) is taken without restarting the agent.
// A device that comes back where it was needs no new look: its driver answers again.

export interface AutoOptions {
  /** Where the choice and why are said (the agent's log). */
  log?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Environment of the looks (CUPS_SERVER, SANE_CONFIG_DIR); process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Least time between two looks while nothing answers, ms (default 10 s). */
  rediscoverMs?: number;
}

export interface Found<D> {
  uri: string;
  why: string;
  make(): D;
}

export class Follower<
  S extends { connected: boolean },
  D extends { readonly uri: string; status(signal?: AbortSignal): Promise<S>; close(): Promise<void> },
> {
  current: D | undefined;
  private lastLook = -Infinity;
  private looking: Promise<void> | undefined;
  private readonly retired: D[] = [];
  private saidNothing = false;

  private readonly what: 'printer' | 'scanner';
  private readonly look: () => Promise<Found<D> | undefined>;
  private readonly o: AutoOptions;

  constructor(what: 'printer' | 'scanner', look: () => Promise<Found<D> | undefined>, o: AutoOptions) {
    this.what = what;
    this.look = look;
    this.o = o;
  }

  /** Looks again unless it looked less than rediscoverMs ago; one look at a time. */
  async rediscover(): Promise<void> {
    if (this.looking) return this.looking;
    if (Date.now() - this.lastLook < (this.o.rediscoverMs ?? 10_000)) return;
    this.lastLook = Date.now();
    this.looking = (async () => {
      const found = await this.look().catch(() => undefined);
      if (!found) {
        if (!this.saidNothing)
          this.o.log?.(
            `${this.what} auto: nothing found; looking again every ${(this.o.rediscoverMs ?? 10_000) / 1000} s`,
            this.current ? { still: this.current.uri } : undefined,
          );
        this.saidNothing = true;
        return;
      }
      this.saidNothing = false;
      if (this.current?.uri === found.uri) return;
      const before = this.current?.uri;
      // The old driver may still be following a job that is failing; it is closed at the end.
      if (this.current) this.retired.push(this.current);
      this.current = found.make();
      this.o.log?.(`${this.what} auto: chose ${found.uri}: ${found.why}`, before ? { instead_of: before } : undefined);
    })().finally(() => {
      this.looking = undefined;
    });
    return this.looking;
  }

  /** The device's status; one that stopped answering makes it look again, and a device found
   *  elsewhere answers instead. `none` while nothing was ever found. */
  async status(none: S, signal?: AbortSignal): Promise<S> {
    const before = this.current;
    if (before) {
      const s = await before.status(signal);
      if (s.connected) return s;
      await this.rediscover();
      const now = this.current;
      return now === before || !now ? s : now.status(signal);
    }
    await this.rediscover();
    return this.current ? this.current.status(signal) : none;
  }

  async close(): Promise<void> {
    for (const d of [...this.retired.splice(0), ...(this.current ? [this.current] : [])])
      await d.close().catch(() => undefined);
    this.current = undefined;
  }
}
