// A sliding window of numbers kept sorted, for a quantile of a profile's neighbourhood at every
// step (page-quality.ts, the margins' band profiles): adding and removing one value a step
// costs a binary search and a short move, where sorting the window afresh cost a sort a step.
// Written here: a binary search over a typed array, not worth a dependency.

/** A window of values kept sorted, for a quantile of a profile's neighbourhood as it slides. */
export class SortedWindow {
  private readonly v: Float64Array;
  private n = 0;
  /** Room for `capacity` values and one more (a slide may add before it removes). */
  constructor(capacity: number) {
    this.v = new Float64Array(capacity + 1);
  }
  /** The first index whose value is not below `x`. */
  private lower(x: number): number {
    let lo = 0,
      hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.v[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  add(x: number): void {
    const at = this.lower(x);
    this.v.copyWithin(at + 1, at, this.n);
    this.v[at] = x;
    this.n++;
  }
  /** Takes out one value equal to `x`, which must be in the window. */
  remove(x: number): void {
    const at = this.lower(x);
    this.v.copyWithin(at, at + 1, this.n);
    this.n--;
  }
  /** The value at `q` of the sorted window (index ⌊q · size⌋); NaN when empty. */
  quantile(q: number): number {
    return this.n === 0 ? Number.NaN : this.v[Math.floor(this.n * q)]!;
  }
}
