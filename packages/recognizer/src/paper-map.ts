// The paper's own brightness, per 8 mm block, so that every area is judged against the paper
// right around it: uneven light and grey recycled paper move the reference, not the verdict.
import type { GreyImage } from './grey-image.ts';

export interface PaperMap {
  level(xPx: number, yPx: number): number;
}

export function buildPaperMap(thumb: GreyImage, factor: number, blockPx: number): PaperMap {
  const bw = Math.ceil(thumb.width / blockPx),
    bh = Math.ceil(thumb.height / blockPx);
  const levels = new Float32Array(bw * bh);
  const hist = new Uint32Array(256);
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++) {
      hist.fill(0);
      let n = 0;
      const x1 = Math.min(thumb.width, (bx + 1) * blockPx),
        y1 = Math.min(thumb.height, (by + 1) * blockPx);
      for (let y = by * blockPx; y < y1; y++)
        for (let x = bx * blockPx; x < x1; x++) {
          hist[thumb.data[y * thumb.width + x]!]!++;
          n++;
        }
      // The 85th percentile: paper even where a mark, a code or a fiducial covers most of a block.
      let acc = 0,
        v = 0;
      for (; v < 256; v++) {
        acc += hist[v]!;
        if (acc >= 0.85 * n) break;
      }
      levels[by * bw + bx] = v;
    }
  }
  // A block almost entirely covered by ink reads low; its brighter neighbours say where the paper is.
  const fixed = new Float32Array(levels);
  for (let by = 0; by < bh; by++)
    for (let bx = 0; bx < bw; bx++) {
      let m = 0;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const x = bx + dx,
            y = by + dy;
          if (x >= 0 && y >= 0 && x < bw && y < bh) m = Math.max(m, levels[y * bw + x]!);
        }
      const own = levels[by * bw + bx]!;
      if (own < m * 0.8) fixed[by * bw + bx] = m * 0.95;
    }
  const scale = factor * blockPx;
  return {
    level(xPx, yPx) {
      const fx = Math.min(Math.max(xPx / scale - 0.5, 0), bw - 1),
        fy = Math.min(Math.max(yPx / scale - 0.5, 0), bh - 1);
      const x0 = Math.floor(fx),
        y0 = Math.floor(fy),
        x1 = Math.min(x0 + 1, bw - 1),
        y1 = Math.min(y0 + 1, bh - 1);
      const ax = fx - x0,
        ay = fy - y0;
      const top = fixed[y0 * bw + x0]! * (1 - ax) + fixed[y0 * bw + x1]! * ax;
      const bot = fixed[y1 * bw + x0]! * (1 - ax) + fixed[y1 * bw + x1]! * ax;
      return top * (1 - ay) + bot * ay;
    },
  };
}
