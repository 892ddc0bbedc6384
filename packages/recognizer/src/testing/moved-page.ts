// A page of corner marks alone, turned, scaled and moved about its centre, for the recognizer's
// unit tests of finding corner marks (cut-mark.test.ts, moved-page-marks.test.ts): drawn at 200 dpi with
// 4 × 4 subsamples a pixel, black 25 on paper 235; what lies past the image's edge is cut off.
import type { GreyImage } from '../grey-image.ts';
import { CORNERS, fiducialCentre, fiducialSize, PAGE } from '../page-frame.ts';

export const DPI = 200,
  PXMM = DPI / 25.4;
export const W = Math.round(PAGE.width * PXMM),
  H = Math.round(PAGE.height * PXMM);

/** The page's point (mm) at image point (mm) under a turn by `deg` and a scale about the page's centre, and back. */
export function transform(deg: number, scale: number, dx = 0, dy = 0) {
  const a = (deg * Math.PI) / 180,
    c = Math.cos(a),
    s = Math.sin(a);
  const mx = PAGE.width / 2,
    my = PAGE.height / 2;
  return {
    toImage: (x: number, y: number) => ({
      x: mx + dx + scale * (c * (x - mx) - s * (y - my)),
      y: my + dy + scale * (s * (x - mx) + c * (y - my)),
    }),
    toPage: (x: number, y: number) => {
      const u = (x - mx - dx) / scale,
        v = (y - my - dy) / scale;
      return { x: mx + c * u + s * v, y: my - s * u + c * v };
    },
  };
}

/** The four corner marks (black 25 on paper 235) as the transform places them, 4 × 4 subsamples a pixel for soft edges. */
export function markedPage(t: ReturnType<typeof transform>): GreyImage {
  const data = new Uint8Array(W * H).fill(235);
  for (const k of CORNERS) {
    const m = fiducialCentre(k),
      h = fiducialSize(k) / 2;
    const at = t.toImage(m.x, m.y);
    const reach = Math.ceil(h * 1.6 * PXMM);
    const cx = Math.round(at.x * PXMM),
      cy = Math.round(at.y * PXMM);
    for (let y = Math.max(0, cy - reach); y < Math.min(H, cy + reach); y++)
      for (let x = Math.max(0, cx - reach); x < Math.min(W, cx + reach); x++) {
        let dark = 0;
        for (let j = 0; j < 4; j++)
          for (let i = 0; i < 4; i++) {
            const p = t.toPage((x + (i + 0.5) / 4) / PXMM, (y + (j + 0.5) / 4) / PXMM);
            if (Math.abs(p.x - m.x) <= h && Math.abs(p.y - m.y) <= h) dark++;
          }
        if (dark > 0) data[y * W + x] = Math.round(235 - ((235 - 25) * dark) / 16);
      }
  }
  return { data, width: W, height: H };
}

/** How far each whole mark reaches past the image's edges (mm, 0 when inside). */
export function pastTheEdge(t: ReturnType<typeof transform>) {
  return CORNERS.map((k) => {
    const m = fiducialCentre(k),
      h = fiducialSize(k) / 2;
    const pts = [
      [-h, -h],
      [h, -h],
      [-h, h],
      [h, h],
    ].map(([u, v]) => t.toImage(m.x + u!, m.y + v!));
    return Math.max(0, ...pts.map((p) => Math.max(-p.x, -p.y, p.x - PAGE.width, p.y - PAGE.height)));
  });
}
