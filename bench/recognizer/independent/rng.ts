// Generator B's own seeded randomness (sfc32), apart from generator A's mulberry32.
export interface Rng {
  next(): number;
  range(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  normal(): number;
}

export function sfc32(seed: number): Rng {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    range: (lo, hi) => lo + (hi - lo) * next(),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    // Irwin-Hall: the sum of four uniforms, centred and scaled to unit variance.
    normal: () => (next() + next() + next() + next() - 2) * Math.sqrt(3),
  };
}
