// Generator B's printer and scanner: the template PDF rasterised by poppler (pdftoppm), the
// marks' SVG by librsvg, then paper, show-through, dog-ears, the scanner's optics (area
// resampling, affine placement, blur), its tone curve, light falloff, noise, streaks, dust and
// its file format. Built apart from generator A's renderer on purpose (no shared code).
import { spawn } from 'node:child_process';
import sharp from 'sharp';
import { sfc32, type Rng } from './rng.ts';

export interface Raster {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3;
}

export interface BScan {
  dpi: number;
  colour: boolean;
  angleDeg: number;
  upsideDown: boolean;
  scale: number;
  skewDeg: number;
  offsetMm: { x: number; y: number };
  /** Grey of the scanner's backing around the sheet; null: a white lid. */
  backing: number | null;
  scanAreaMm: { w: number; h: number };
  paper: number;
  paperTint: [number, number, number];
  mottle: number;
  blurMm: number;
  black: number;
  white: number;
  gamma: number;
  noise: number;
  falloff: number;
  falloffAngle: number;
  streaks: Array<{ xMm: number; px: number; gain: number }>;
  dust: number;
  dogEar: { corner: 0 | 1 | 2 | 3; sizeMm: number } | null;
  /** JPEG quality, or null for a lossless PNG. */
  jpeg: number | null;
  showThrough: number;
  seed: number;
}

/** Scan parameters of one side; `blank` pages always get grey paper and a dark backing. */
export function scanParams(seed: number, dpi: number, blank: boolean): BScan {
  const r = sfc32(seed ^ 0x3c6ef372);
  const grey = blank || r.next() < 0.3;
  const backing = blank || r.next() < 0.5 ? r.range(0.05, 0.4) : null;
  const streaks = Array.from({ length: r.pick([0, 0, 0, 1, 1, 2, 3]) }, () => ({
    xMm: r.range(5, 205),
    px: r.pick([1, 1, 2, 3]),
    gain: r.next() < 0.7 ? r.range(0.5, 0.8) : r.range(1.05, 1.15),
  }));
  return {
    dpi,
    colour: r.next() < 0.3,
    angleDeg: r.range(-3, 3),
    upsideDown: !blank && r.next() < 0.5,
    scale: r.range(0.98, 1.02),
    skewDeg: r.range(-0.4, 0.4),
    offsetMm: { x: r.range(-3, 3), y: r.range(-3, 3) },
    backing,
    scanAreaMm: { w: 210 + (backing === null ? 0 : r.range(0, 8)), h: 297 + (backing === null ? 0 : r.range(0, 8)) },
    paper: grey ? r.range(0.75, 0.9) : r.range(0.92, 1),
    paperTint: r.next() < 0.5 ? [1, 0.99, 0.95] : [0.97, 0.99, 1],
    mottle: r.range(0, 0.03),
    blurMm: r.range(0, 0.12),
    black: r.range(12, 45),
    white: r.range(228, 252),
    gamma: r.range(0.85, 1.15),
    noise: r.range(2, 8),
    falloff: r.range(0, 0.25),
    falloffAngle: r.range(0, Math.PI * 2),
    streaks,
    dust: Math.floor(r.range(0, 30)),
    dogEar: !blank && r.next() < 0.08 ? { corner: r.pick([0, 1, 2, 3] as const), sizeMm: r.range(25, 42) } : null,
    jpeg: r.next() < 0.1 ? null : Math.round(r.range(30, 92)),
    showThrough: r.range(0.04, 0.15),
    seed,
  };
}

/** One page of a PDF at `dpi`, grey or RGB, through pdftoppm (PGM/PPM on stdout). */
export function rasterisePdfPage(pdf: Uint8Array, page: number, dpi: number, colour: boolean): Promise<Raster> {
  return new Promise((resolve, reject) => {
    // The PDF on stdin: no temporary file.
    const p = spawn('pdftoppm', [
      ...(colour ? [] : ['-gray']),
      '-r',
      String(dpi),
      '-f',
      String(page),
      '-l',
      String(page),
      '-',
    ]);
    p.stdin.on('error', () => {
      /* reported by close */
    });
    p.stdin.end(pdf);
    const chunks: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => chunks.push(c));
    p.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    p.on('error', reject);
    p.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`pdftoppm exited ${code}: ${err}`));
        return;
      }
      const buf = Buffer.concat(chunks);
      // Netpbm header: magic, width, height, maxval, one whitespace byte.
      const m = /^(P5|P6)\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(buf.subarray(0, 64).toString('latin1'));
      if (!m) {
        reject(new Error('pdftoppm: not a PGM/PPM'));
        return;
      }
      const width = Number(m[2]),
        height = Number(m[3]);
      const channels = m[1] === 'P6' ? 3 : 1;
      resolve({
        data: new Uint8Array(buf.buffer, buf.byteOffset + m[0].length, width * height * channels),
        width,
        height,
        channels,
      });
    });
  });
}

/** The marks' SVG (page millimetres) drawn over the printed raster, darkening it (multiply). */
export async function drawMarks(printed: Raster, svgBody: string): Promise<Raster> {
  const out = new Uint8Array(printed.data);
  if (svgBody.length === 0) return { ...printed, data: out };
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${printed.width}" height="${printed.height}" viewBox="0 0 210 297">${svgBody}</svg>`;
  const { data } = await sharp(Buffer.from(svg), { density: 72 })
    .resize(printed.width, printed.height, { fit: 'fill' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = printed.width * printed.height,
    ch = printed.channels;
  for (let i = 0; i < n; i++) {
    const a = data[i * 4 + 3]! / 255;
    if (a === 0) continue;
    if (ch === 1) {
      const g = (0.299 * data[i * 4]! + 0.587 * data[i * 4 + 1]! + 0.114 * data[i * 4 + 2]!) / 255;
      out[i] = out[i]! * (1 - a + a * g);
    } else for (let c = 0; c < 3; c++) out[i * 3 + c] = out[i * 3 + c]! * (1 - a + (a * data[i * 4 + c]!) / 255);
  }
  return { ...printed, data: out };
}

/** A printed and marked side as the scanner delivers it, encoded (JPEG or PNG). */
export async function scanSide(side: Raster, renderDpi: number, p: BScan, back: Raster | null): Promise<Uint8Array> {
  const r = sfc32(p.seed);
  const ch = side.channels;
  const space = ch === 1 ? 'b-w' : 'srgb';
  const pxmm = p.dpi / 25.4;
  // Optics first: the lens integrates over each sensor pixel (area resampling from the
  // render resolution). Paper tone and show-through are smooth, so they can follow.
  const Ws = Math.round(side.width * (p.dpi / renderDpi) * p.scale),
    Hs = Math.round(side.height * (p.dpi / renderDpi) * p.scale);
  const small = await sharp(side.data, { raw: { width: side.width, height: side.height, channels: ch } })
    .resize(Ws, Hs, { kernel: 'mitchell', fit: 'fill' })
    .toColourspace(space)
    .raw()
    .toBuffer();
  // Clamped: paper mottling may brighten a pixel past 255.
  const page = new Uint8ClampedArray(small.buffer, small.byteOffset, Ws * Hs * ch);
  // Paper: tone, tint and mottling multiply everything printed or drawn on it.
  const gw = 24,
    gh = 34;
  const grid = Float32Array.from({ length: (gw + 1) * (gh + 1) }, () => 1 + p.mottle * (r.next() * 2 - 1));
  const gx0 = new Int32Array(Ws),
    gax = new Float32Array(Ws);
  for (let x = 0; x < Ws; x++) {
    const g = (x / Ws) * (gw - 1);
    gx0[x] = Math.floor(g);
    gax[x] = g - Math.floor(g);
  }
  let showThrough: Uint8Array | null = null;
  if (back) {
    // The other side, mirrored and diffused by the paper.
    const b = await sharp(back.data, { raw: { width: back.width, height: back.height, channels: back.channels } })
      .resize(Ws, Hs, { fit: 'fill' })
      .flop()
      .blur(Math.max(0.3, 0.4 * pxmm))
      .toColourspace('b-w')
      .raw()
      .toBuffer();
    showThrough = new Uint8Array(b.buffer, b.byteOffset, Ws * Hs);
  }
  const tint = ch === 3 ? p.paperTint : [1, 1, 1];
  for (let y = 0; y < Hs; y++) {
    const g = (y / Hs) * (gh - 1),
      y0 = Math.floor(g),
      ay = g - y0;
    for (let x = 0; x < Ws; x++) {
      const k = y0 * (gw + 1) + gx0[x]!,
        ax = gax[x]!;
      const m =
        (grid[k]! * (1 - ax) + grid[k + 1]! * ax) * (1 - ay) +
        (grid[k + gw + 1]! * (1 - ax) + grid[k + gw + 2]! * ax) * ay;
      const i = y * Ws + x;
      const st = showThrough ? 1 - p.showThrough * (1 - showThrough[i]! / 255) : 1;
      for (let c = 0; c < ch; c++) page[i * ch + c] = page[i * ch + c]! * p.paper * m * tint[c]! * st;
    }
  }
  // A dog-eared corner: the fold hides the print and shows the paper's back.
  if (p.dogEar) {
    const L = p.dogEar.sizeMm * pxmm;
    const right = p.dogEar.corner === 1 || p.dogEar.corner === 3,
      bottom = p.dogEar.corner >= 2;
    for (let y = 0; y < Math.min(Hs, L); y++)
      for (let x = 0; x < Math.min(Ws, L - y); x++) {
        const X = right ? Ws - 1 - x : x,
          Y = bottom ? Hs - 1 - y : y;
        const v = 255 * p.paper * (L - y - x < 0.3 * pxmm ? 0.8 : 0.97);
        for (let c = 0; c < ch; c++) page[(Y * Ws + X) * ch + c] = v;
      }
  }
  // The sheet's placement on the glass: rotation (upside down or not), skew, offset.
  const bgv = Math.round((p.backing === null ? 0.97 : p.backing) * 255);
  const a = ((p.angleDeg + (p.upsideDown ? 180 : 0)) * Math.PI) / 180,
    sk = Math.tan((p.skewDeg * Math.PI) / 180);
  const cos = Math.cos(a),
    sin = Math.sin(a);
  const placed = await sharp(page, { raw: { width: Ws, height: Hs, channels: ch } })
    .affine(
      [
        [cos, -sin + cos * sk],
        [sin, cos + sin * sk],
      ],
      { background: { r: bgv, g: bgv, b: bgv }, interpolator: 'bicubic' },
    )
    .toColourspace(space)
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (placed.info.channels !== ch) throw new Error(`affine gave ${placed.info.channels} channels`);
  const pw = placed.info.width,
    ph = placed.info.height;
  const W = Math.round(p.scanAreaMm.w * pxmm),
    H = Math.round(p.scanAreaMm.h * pxmm);
  let img = new Uint8Array(W * H * ch).fill(bgv);
  const left = Math.round(W / 2 + p.offsetMm.x * pxmm - pw / 2),
    top = Math.round(H / 2 + p.offsetMm.y * pxmm - ph / 2);
  const x0 = Math.max(0, -left),
    x1 = Math.min(pw, W - left);
  for (let y = Math.max(0, -top); y < Math.min(ph, H - top); y++) {
    if (x1 > x0)
      img.set(placed.data.subarray((y * pw + x0) * ch, (y * pw + x1) * ch), ((y + top) * W + x0 + left) * ch);
  }
  if (p.blurMm * pxmm >= 0.3) {
    const b = await sharp(img, { raw: { width: W, height: H, channels: ch } })
      .blur(p.blurMm * pxmm)
      .toColourspace(space)
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (b.info.channels !== ch) throw new Error(`blur gave ${b.info.channels} channels`);
    img = new Uint8Array(b.data.buffer, b.data.byteOffset, W * H * ch);
  }
  // Sensor: light falloff along one direction, tone curve, noise, streaks and dust.
  const lut = new Float32Array(256);
  for (let v = 0; v < 256; v++) lut[v] = (v / 255) ** p.gamma;
  const normals = Float32Array.from({ length: 1 << 16 }, () => p.noise * r.normal());
  const dx = Math.cos(p.falloffAngle),
    dy = Math.sin(p.falloffAngle);
  const streakGain = new Float32Array(W).fill(1);
  for (const s of p.streaks) {
    const sx = Math.round(s.xMm * pxmm);
    for (let k = 0; k < s.px; k++) if (sx + k < W) streakGain[sx + k] = s.gain;
  }
  const span = p.white - p.black;
  for (let y = 0; y < H; y++) {
    let n = Math.floor(r.next() * 65536);
    const step = 2 * Math.floor(r.next() * 1000) + 1;
    for (let x = 0; x < W; x++) {
      const t = ((x / W - 0.5) * dx + (y / H - 0.5) * dy + 0.71) / 1.42;
      const light = (1 - p.falloff * t) * streakGain[x]!;
      for (let c = 0; c < ch; c++) {
        const i = (y * W + x) * ch + c;
        const v = p.black + span * lut[img[i]!]! * light + normals[n]!;
        n = (n + step) & 65535;
        img[i] = v < 0 ? 0 : Math.min(v, 255);
      }
    }
  }
  for (let k = 0; k < p.dust; k++) {
    const cx = r.next() * W,
      cy = r.next() * H,
      rad = Math.max(0.5, r.range(0.03, 0.12) * pxmm);
    for (let y = Math.floor(cy - rad); y <= cy + rad; y++)
      for (let x = Math.floor(cx - rad); x <= cx + rad; x++) {
        if (x < 0 || y < 0 || x >= W || y >= H || (x - cx) ** 2 + (y - cy) ** 2 > rad * rad) continue;
        for (let c = 0; c < ch; c++) img[(y * W + x) * ch + c] = Math.min(img[(y * W + x) * ch + c]!, p.black + 20);
      }
  }
  const enc = sharp(img, { raw: { width: W, height: H, channels: ch } });
  const out =
    p.jpeg === null
      ? await (ch === 1 ? enc.toColourspace('b-w') : enc).png({ compressionLevel: 1 }).toBuffer()
      : await (ch === 1 ? enc.toColourspace('b-w') : enc).jpeg({ quality: p.jpeg, mozjpeg: p.jpeg < 60 }).toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

export type { Rng };
