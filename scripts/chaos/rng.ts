// A seeded pseudo-random source (mulberry32): the same seed gives the same fault schedule and
// the same workload choices (docs/chaos.md, "Reproducing a run").
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    const x = xs[Math.floor(this.next() * xs.length)];
    if (x === undefined) throw new Error('pick from an empty list');
    return x;
  }
  /** A new generator derived from this one (one per box: their choices do not shift each other). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }
}
