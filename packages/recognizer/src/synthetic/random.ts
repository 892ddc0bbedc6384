// Seeded randomness so every synthetic page can be rebuilt from its seed.
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function between(r: Random, lo: number, hi: number): number {
  return lo + (hi - lo) * r();
}

export function pick<T>(r: Random, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)]!;
}

export function gauss(r: Random): number {
  return Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}
