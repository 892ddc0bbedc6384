// Generator C's own seeded randomness (splitmix32), apart from generator A's mulberry32 and
// generator B's sfc32: its pages share no random stream with the generators rules were set on.
export interface Rng {
  next(): number;
  range(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  normal(): number;
  int(lo: number, hi: number): number;
}

export function splitmix(seed: number): Rng {
  let s = (seed ^ 0x5bd1e995) >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < 4; i++) next();
  return {
    next,
    range: (lo, hi) => lo + (hi - lo) * next(),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    // Box-Muller.
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
  };
}
