// Generator C's printer and scanner: the damage of classes.ts applied to a printed page (grey
// raster at the render resolution), then the sheet placed on the glass and scanned. Own code,
// apart from generator A's renderer and generator B's scanner model (nothing shared but sharp).
import sharp from 'sharp';
import { bandAt, type Damage } from './classes.ts';
import { splitmix } from './rng.ts';

export interface Grey {
  data: Uint8Array;
  width: number;
  height: number;
}

/** The printer's damage, before the student writes: toner fog, bands, patches, specks, ink running short. */
export function printerDamage(page: Grey, dpi: number, d: Damage): Grey {
  const { width: W, height: H } = page;
  const pxmm = dpi / 25.4;
  const out = new Uint8Array(W * H);
  const rowPaper = new Float32Array(H).fill(1 - d.fog),
    colPaper = new Float32Array(W).fill(1);
  for (const b of d.printBands) {
    if (b.axis === 'y') for (let y = 0; y < H; y++) rowPaper[y]! -= b.depth * bandAt(b, y / pxmm);
    else for (let x = 0; x < W; x++) colPaper[x]! -= b.depth * bandAt(b, x / pxmm);
  }
  const li = d.lowInk;
  const inkRow = new Float32Array(H).fill(1),
    inkCol = new Float32Array(W).fill(1);
  if (li) {
    const line = { axis: li.axis, periodMm: li.periodMm, widthMm: li.widthMm, depth: li.fade, phaseMm: li.phaseMm };
    if (li.axis === 'y') for (let y = 0; y < H; y++) inkRow[y] = 1 - li.fade * bandAt(line, y / pxmm);
    else for (let x = 0; x < W; x++) inkCol[x] = 1 - li.fade * bandAt(line, x / pxmm);
  }
  const src = page.data;
  for (let y = 0; y < H; y++) {
    const rp = rowPaper[y]!,
      ri = inkRow[y]!,
      o = y * W;
    for (let x = 0; x < W; x++) {
      const ink = (1 - src[o + x]! / 255) * ri * inkCol[x]!;
      out[o + x] = Math.max(0, Math.min(255, 255 * (rp + colPaper[x]! - 1) * (1 - ink)));
    }
  }
  for (const p of d.patches) {
    const x0 = Math.max(0, Math.floor((p.x - 2 * p.rx) * pxmm)),
      x1 = Math.min(W, Math.ceil((p.x + 2 * p.rx) * pxmm));
    const y0 = Math.max(0, Math.floor((p.y - 2 * p.ry) * pxmm)),
      y1 = Math.min(H, Math.ceil((p.y + 2 * p.ry) * pxmm));
    for (let y = y0; y < y1; y++)
      for (let x = x0; x < x1; x++) {
        const q = ((x / pxmm - p.x) / p.rx) ** 2 + ((y / pxmm - p.y) / p.ry) ** 2;
        if (q < 4) out[y * W + x] = out[y * W + x]! * (1 - p.dark * Math.exp(-1.5 * q));
      }
  }
  for (const b of d.blobs) {
    const r = b.r * pxmm,
      cx = b.x * pxmm,
      cy = b.y * pxmm;
    for (let y = Math.max(0, Math.floor(cy - r - 1)); y < Math.min(H, Math.ceil(cy + r + 1)); y++) {
      for (let x = Math.max(0, Math.floor(cx - r - 1)); x < Math.min(W, Math.ceil(cx + r + 1)); x++) {
        const e = Math.hypot(x - cx, y - cy) - r;
        if (e < 1) out[y * W + x] = out[y * W + x]! * (1 - b.dark * Math.min(1, 1 - e));
      }
    }
  }
  return { data: out, width: W, height: H };
}

/** Ink spreading into the paper: every dark thing grows by `mm` (a separable minimum filter). */
export function spread(img: Grey, dpi: number, mm: number): Grey {
  const r = Math.round((mm * dpi) / 25.4);
  if (r < 1) return img;
  const { width: W, height: H } = img;
  const tmp = new Uint8Array(W * H),
    out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let m = 255;
      for (let k = Math.max(0, x - r); k <= Math.min(W - 1, x + r); k++) m = Math.min(m, img.data[y * W + k]!);
      tmp[y * W + x] = m;
    }
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let m = 255;
      for (let k = Math.max(0, y - r); k <= Math.min(H - 1, y + r); k++) m = Math.min(m, tmp[k * W + x]!);
      out[y * W + x] = m;
    }
  return { data: out, width: W, height: H };
}

/** The sheet scanned: resampled to the scan resolution, the other side through it, placed, lit, sensed, encoded as JPEG. */
export async function scanPage(
  side: Grey,
  renderDpi: number,
  dpi: number,
  d: Damage,
  back: Grey | null,
  seed: number,
): Promise<Uint8Array> {
  const r = splitmix(seed);
  const pxmm = dpi / 25.4;
  const Ws = Math.round(side.width * (dpi / renderDpi) * d.scale),
    Hs = Math.round(side.height * (dpi / renderDpi) * d.scale);
  const small = await sharp(side.data, { raw: { width: side.width, height: side.height, channels: 1 } })
    .resize(Ws, Hs, { kernel: 'lanczos3', fit: 'fill' })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  const page = new Uint8Array(small.buffer, small.byteOffset, Ws * Hs);
  if (back && d.bleed > 0) {
    const b = await sharp(back.data, { raw: { width: back.width, height: back.height, channels: 1 } })
      .resize(Ws, Hs, { fit: 'fill' })
      .flop()
      .blur(Math.max(0.3, 0.35 * pxmm))
      .toColourspace('b-w')
      .raw()
      .toBuffer();
    for (let i = 0; i < Ws * Hs; i++) page[i] = page[i]! * (1 - d.bleed * (1 - b[i]! / 255));
  }
  const bg = Math.round((d.backing ?? 0.97) * 255);
  const a = ((d.angleDeg + (d.upsideDown ? 180 : 0)) * Math.PI) / 180,
    sh = Math.tan((d.shearDeg * Math.PI) / 180);
  const cos = Math.cos(a),
    sin = Math.sin(a);
  const placed = await sharp(page, { raw: { width: Ws, height: Hs, channels: 1 } })
    .affine(
      [
        [cos, -sin + cos * sh],
        [sin, cos + sin * sh],
      ],
      { background: { r: bg, g: bg, b: bg }, interpolator: 'bicubic' },
    )
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pw = placed.info.width,
    ph = placed.info.height;
  const margin = d.backing === null ? 0 : 6;
  const W = Math.round((210 + margin) * pxmm),
    H = Math.round((297 + margin) * pxmm);
  let img = new Uint8Array(W * H).fill(bg);
  const left = Math.round(W / 2 + d.offsetMm.x * pxmm - pw / 2),
    top = Math.round(H / 2 + d.offsetMm.y * pxmm - ph / 2);
  const x0 = Math.max(0, -left),
    x1 = Math.min(pw, W - left);
  for (let y = Math.max(0, -top); y < Math.min(ph, H - top); y++)
    if (x1 > x0) img.set(placed.data.subarray(y * pw + x0, y * pw + x1), (y + top) * W + x0 + left);
  if (d.blurMm * pxmm >= 0.3) {
    const b = await sharp(img, { raw: { width: W, height: H, channels: 1 } })
      .blur(d.blurMm * pxmm)
      .toColourspace('b-w')
      .raw()
      .toBuffer();
    img = new Uint8Array(b.buffer, b.byteOffset, W * H);
  }
  // The sensor: light over the page (gradient, shadow, the scanner's own bands, dust columns),
  // then its tone curve and noise.
  const col = new Float32Array(W).fill(1),
    row = new Float32Array(H).fill(1);
  for (const s of d.streaks) {
    const sx = Math.round(s.xMm * pxmm);
    for (let k = 0; k < s.px; k++) if (sx + k < W) col[sx + k] = s.gain;
  }
  for (const b of d.scanBands) {
    if (b.axis === 'y') for (let y = 0; y < H; y++) row[y]! *= 1 - b.depth * bandAt(b, y / pxmm);
    else for (let x = 0; x < W; x++) col[x]! *= 1 - b.depth * bandAt(b, x / pxmm);
  }
  const lut = new Float32Array(256);
  for (let v = 0; v < 256; v++) lut[v] = (v / 255) ** d.gamma;
  const span = d.white - d.black;
  const gx = Math.cos(d.gradient.angle),
    gy = Math.sin(d.gradient.angle);
  const sd = d.shadow;
  const sx = sd ? Math.cos(sd.angle) : 0,
    sy = sd ? Math.sin(sd.angle) : 0;
  const cxm = W / pxmm / 2,
    cym = H / pxmm / 2;
  for (let y = 0; y < H; y++) {
    const ym = y / pxmm - cym;
    for (let x = 0; x < W; x++) {
      const xm = x / pxmm - cxm;
      const t = ((xm / 210) * gx + (ym / 297) * gy + 0.71) / 1.42;
      let light = (1 - d.gradient.drop * t) * row[y]! * col[x]!;
      if (sd) {
        const s = (xm * sx + ym * sy - sd.offsetMm) / sd.edgeMm + 0.5;
        if (s > 0) {
          const f = s >= 1 ? 1 : s * s * (3 - 2 * s);
          light *= 1 - sd.dark * f;
        }
      }
      const i = y * W + x;
      const v = (d.black + span * lut[img[i]!]!) * light + d.noise * r.normal();
      img[i] = v < 0 ? 0 : Math.min(v, 255);
    }
  }
  const out = await sharp(img, { raw: { width: W, height: H, channels: 1 } })
    .toColourspace('b-w')
    .jpeg({ quality: d.jpeg })
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
