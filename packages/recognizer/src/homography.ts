// 4-point homography by direct linear transform; enough for a flat sheet on a flatbed or
// ADF, and a few dozen lines instead of a 450 ms OpenCV load (docs/cards.md, "How recognition works").

/** Row-major 3x3 with h[8] = 1. */
export type Homography = Float64Array;
export interface Pt {
  x: number;
  y: number;
}

export function solveHomography(src: readonly Pt[], dst: readonly Pt[]): Homography | null {
  if (src.length !== 4 || dst.length !== 4) throw new RangeError('four point pairs');
  const a: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const { x, y } = src[i]!;
    const { x: u, y: v } = dst[i]!;
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  // Gaussian elimination with partial pivoting on the 8x9 augmented matrix.
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return null;
    [a[c], a[p]] = [a[p]!, a[c]!];
    const row = a[c]!;
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / row[c]!;
      if (f === 0) continue;
      for (let k = c; k < 9; k++) a[r]![k]! -= f * row[k]!;
    }
  }
  const h = new Float64Array(9);
  for (let i = 0; i < 8; i++) h[i] = a[i]![8]! / a[i]![i]!;
  h[8] = 1;
  return h;
}

export function apply(h: Homography, x: number, y: number): Pt {
  const w = h[6]! * x + h[7]! * y + h[8]!;
  return { x: (h[0]! * x + h[1]! * y + h[2]!) / w, y: (h[3]! * x + h[4]! * y + h[5]!) / w };
}

/** Local linear part at (x, y): d(image)/d(mm), used to sample a small area without warping. */
export function jacobian(h: Homography, x: number, y: number): [number, number, number, number] {
  const w = h[6]! * x + h[7]! * y + h[8]!;
  const u = (h[0]! * x + h[1]! * y + h[2]!) / w;
  const v = (h[3]! * x + h[4]! * y + h[5]!) / w;
  return [(h[0]! - u * h[6]!) / w, (h[1]! - u * h[7]!) / w, (h[3]! - v * h[6]!) / w, (h[4]! - v * h[7]!) / w];
}

/** The inverse mapping (image to millimetres), or null if the homography is singular. */
export function invert(h: Homography): Homography | null {
  const [a, b, c, d, e, f, g, k, l] = h as unknown as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const A = e * l - f * k,
    B = -(d * l - f * g),
    C = d * k - e * g;
  const det = a * A + b * B + c * C;
  if (Math.abs(det) < 1e-15) return null;
  const inv = new Float64Array([
    A,
    -(b * l - c * k),
    b * f - c * e,
    B,
    a * l - c * g,
    -(a * f - c * d),
    C,
    -(a * k - b * g),
    a * e - b * d,
  ]);
  const n = inv[8]!;
  for (let i = 0; i < 9; i++) inv[i] = inv[i]! / n;
  return inv;
}
