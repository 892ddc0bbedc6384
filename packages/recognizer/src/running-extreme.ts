// A grey closing's building block: the running maximum or minimum over a square window, with
// which the corner-mark search flat-fields its windows (fiducials.ts). Written here: it runs on
// float windows inside the synchronous search, cut at each window's edge, and the few loops it
// takes are not worth a round trip through an image library's asynchronous pipeline.

/** Separable running maximum (or minimum) over ±r pixels of a w×h window. */
export function runningExtreme(src: Float32Array, w: number, h: number, r: number, max: boolean): Float32Array {
  const tmp = new Float32Array(w * h),
    out = new Float32Array(w * h);
  const n = Math.max(w, h) + 2 * r;
  const ahead = new Float32Array(n),
    behind = new Float32Array(n);
  for (let y = 0; y < h; y++) runLine(src, tmp, y * w, 1, w, r, max, ahead, behind);
  for (let x = 0; x < w; x++) runLine(tmp, out, x, w, h, r, max, ahead, behind);
  return out;
}

/**
 * The running maximum (or minimum) over ±r of `n` values read at `base + i·stride`, written to
 * `dst` likewise; the window is cut at the line's ends. Van Herk / Gil-Werman: the line, padded
 * by r on each side, is cut into blocks of 2r + 1; each window spans the tail of one block and
 * the head of the next, whose extremes are running ones from the block's end and its start.
 * Three comparisons a value whatever r, where scanning each window took 2r + 1: the corner
 * search flat-fields its windows over ±6 mm, and on a blank back it searches the whole page.
 */
function runLine(
  src: Float32Array,
  dst: Float32Array,
  base: number,
  stride: number,
  n: number,
  r: number,
  max: boolean,
  ahead: Float32Array,
  behind: Float32Array,
): void {
  const k = 2 * r + 1,
    padded = n + 2 * r;
  // Max as is; min through negated values, so that one loop serves both (negation is exact).
  const sign = max ? 1 : -1;
  for (let j = 0; j < padded; j++) ahead[j] = j < r || j >= n + r ? -Infinity : sign * src[base + (j - r) * stride]!;
  for (let j = padded - 1; j >= 0; j--) {
    const v = ahead[j]!;
    behind[j] = j % k === k - 1 || j === padded - 1 ? v : Math.max(v, behind[j + 1]!);
  }
  for (let j = 0; j < padded; j++) if (j % k !== 0 && ahead[j - 1]! > ahead[j]!) ahead[j] = ahead[j - 1]!;
  for (let x = 0; x < n; x++) {
    const a = behind[x]!,
      b = ahead[x + k - 1]!;
    dst[base + x * stride] = sign * Math.max(a, b);
  }
}
