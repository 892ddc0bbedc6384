// Renders a printed side with students' marks as a scanner would deliver it: drawn straight
// at the scan resolution through the placement transform (rotation, skew, scale, offset,
// upside down), then blur, uneven light, show-through, streaks, noise and JPEG.
import { createCanvas, loadImage, type SKRSContext2D } from '@napi-rs/canvas';
import sharp from 'sharp';
import type { DrawOp } from '../page-drawing.ts';
import { PAGE } from '../page-frame.ts';
import { drawMark, type Mark } from './marks.ts';
import { gauss, mulberry32 } from './random.ts';

export interface ScanEffects {
  dpi: number;
  rotationDeg?: number;
  upsideDown?: boolean;
  /** Horizontal shear, degrees. */
  skewDeg?: number;
  scale?: number;
  offsetMm?: { x: number; y: number };
  /** Gaussian blur sigma in millimetres. */
  blurMm?: number;
  /** Noise standard deviation in grey levels. */
  noise?: number;
  jpegQuality?: number;
  /** 0..1: how much darker the darkest corner of the page gets. */
  unevenLight?: number;
  /** The other side's drawing and marks, seen through the paper at this strength (0..1). */
  showThrough?: { ops: DrawOp[]; marks: Mark[]; strength: number };
  /** Vertical dark lines from dirty ADF glass. */
  streaks?: number;
  colour?: boolean;
  /** A corner of the scan folded over or torn off: a 35 mm triangle shows no print. */
  foldedCorner?: 'tl' | 'tr' | 'bl' | 'br';
  /** The printed side as an image of the whole page (any format sharp reads, e.g. a printer's
   *  own rendering of what it printed), drawn under `ops` and the marks: the demo's simulated class
   *  fills in the cards the simulated printer printed. */
  printed?: Uint8Array;
  /** Paper grey level (1 = white). */
  paper?: number;
  /**
   * Grey level (0 = black) of the scanner's backing, seen wherever the page does not cover the
   * scan area: around a rotated or offset page, and all round when the scan area is larger.
   */
  backing?: number;
  /** The scanned area in millimetres (default A4, the page's own size). */
  scanAreaMm?: { w: number; h: number };
  /** The scanner's tone curve: black and white points (grey levels) and a gamma on the way. */
  tone?: { black: number; white: number; gamma: number };
  /** Specks of dust on the glass (0.05-0.2 mm, dark). */
  dust?: number;
  seed?: number;
}

function drawOps(ctx: SKRSContext2D, ops: readonly DrawOp[]): void {
  for (const o of ops) {
    const g = Math.round(o.grey * 255);
    const col = `rgb(${g},${g},${g})`;
    if (o.op === 'rect') {
      ctx.fillStyle = col;
      ctx.fillRect(o.x, o.y, o.w, o.h);
    } else if (o.op === 'outline') {
      ctx.strokeStyle = col;
      ctx.lineWidth = o.width;
      ctx.setLineDash(o.dashed ? [2, 1.2] : []);
      ctx.strokeRect(o.x, o.y, o.w, o.h);
      ctx.setLineDash([]);
    } else if (o.op === 'ellipse') {
      ctx.strokeStyle = col;
      ctx.lineWidth = o.width;
      ctx.beginPath();
      ctx.ellipse(o.cx, o.cy, o.rx, o.ry, 0, 0, Math.PI * 2);
      ctx.stroke();
    } else {
      ctx.fillStyle = col;
      ctx.font = `${o.size}px sans-serif`;
      ctx.textAlign = o.align;
      ctx.fillText(o.text, o.x, o.y);
    }
  }
}

function drawMarks(ctx: SKRSContext2D, marks: readonly Mark[], colour: boolean): void {
  for (const m of marks) drawMark(ctx, m, mulberry32(m.seed), colour);
}

export async function renderScan(ops: readonly DrawOp[], marks: readonly Mark[], fx: ScanEffects): Promise<Uint8Array> {
  const pxmm = fx.dpi / 25.4;
  const area = fx.scanAreaMm ?? { w: PAGE.width, h: PAGE.height };
  const W = Math.round(area.w * pxmm),
    H = Math.round(area.h * pxmm);
  const canvas = createCanvas(W, H);
  const ctx = canvas.getContext('2d');
  const paper = Math.round((fx.paper ?? 1) * 255);
  const paperColour = fx.colour ? `rgb(${paper},${paper - 3},${paper - 10})` : `rgb(${paper},${paper},${paper})`;
  if (fx.backing === undefined) ctx.fillStyle = paperColour;
  else {
    const g = Math.round(fx.backing * 255);
    ctx.fillStyle = `rgb(${g},${g},${g})`;
  }
  ctx.fillRect(0, 0, W, H);
  const s = pxmm * (fx.scale ?? 1);
  const rot = (((fx.rotationDeg ?? 0) + (fx.upsideDown ? 180 : 0)) * Math.PI) / 180;
  const skew = Math.tan(((fx.skewDeg ?? 0) * Math.PI) / 180);
  const cos = Math.cos(rot),
    sin = Math.sin(rot);
  const off = fx.offsetMm ?? { x: 0, y: 0 };
  // page mm -> pixels: centre, shear, rotate, scale, back to the image centre plus offset.
  const place = (mirror: boolean, c2d: SKRSContext2D = ctx) => {
    const mx = mirror ? -1 : 1;
    const a = s * cos * mx,
      b = s * sin * mx,
      c = s * (cos * skew - sin),
      d = s * (sin * skew + cos);
    const cx = PAGE.width / 2,
      cy = PAGE.height / 2;
    c2d.setTransform(a, b, c, d, W / 2 + off.x * pxmm - (a * cx + c * cy), H / 2 + off.y * pxmm - (b * cx + d * cy));
  };
  if (fx.backing !== undefined) {
    // The sheet itself, over the backing.
    place(false);
    ctx.fillStyle = paperColour;
    ctx.fillRect(0, 0, PAGE.width, PAGE.height);
  }
  // Seen through the paper: the other side mirrored, diffused by the paper's fibres (blurred
  // once, on its own layer), darkening this side by `strength` of its own darkness.
  let through: Uint8Array | null = null;
  const strength = fx.showThrough?.strength ?? 0;
  if (fx.showThrough && strength > 0) {
    const layer = createCanvas(W, H);
    const lc = layer.getContext('2d');
    lc.fillStyle = 'white';
    lc.fillRect(0, 0, W, H);
    place(true, lc);
    drawOps(lc, fx.showThrough.ops);
    drawMarks(lc, fx.showThrough.marks, false);
    const grey = await sharp(Buffer.from(lc.getImageData(0, 0, W, H).data.buffer), {
      raw: { width: W, height: H, channels: 4 },
    })
      .extractChannel(1)
      .blur(Math.max(0.3, 0.3 * pxmm))
      .raw()
      .toBuffer();
    through = new Uint8Array(grey.buffer, grey.byteOffset, W * H);
  }
  place(false);
  // Through sharp: the canvas decodes PNG and JPEG only, pdftoppm's pages are TIFF.
  if (fx.printed)
    ctx.drawImage(
      await loadImage(await sharp(fx.printed).png({ compressionLevel: 0 }).toBuffer()),
      0,
      0,
      PAGE.width,
      PAGE.height,
    );
  drawOps(ctx, ops);
  drawMarks(ctx, marks, fx.colour ?? false);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  if (fx.foldedCorner) {
    const c = fx.foldedCorner,
      L = 35 * pxmm;
    const x0 = c === 'tl' || c === 'bl' ? 0 : W,
      y0 = c === 'tl' || c === 'tr' ? 0 : H;
    const sx = x0 === 0 ? 1 : -1,
      sy = y0 === 0 ? 1 : -1;
    ctx.fillStyle = `rgb(${paper},${paper},${paper})`;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x0 + sx * L, y0);
    ctx.lineTo(x0, y0 + sy * L);
    ctx.closePath();
    ctx.fill();
  }
  const rgba = ctx.getImageData(0, 0, W, H).data;

  const channels = fx.colour ? 3 : 1;
  let px = new Uint8Array(W * H * channels);
  for (let i = 0, j = 0; i < W * H; i++, j += 4) {
    if (channels === 1) px[i] = Math.round(0.299 * rgba[j]! + 0.587 * rgba[j + 1]! + 0.114 * rgba[j + 2]!);
    else {
      px[i * 3] = rgba[j]!;
      px[i * 3 + 1] = rgba[j + 1]!;
      px[i * 3 + 2] = rgba[j + 2]!;
    }
  }
  if (fx.blurMm && fx.blurMm * pxmm > 0.35) {
    const b = await sharp(px, { raw: { width: W, height: H, channels } })
      .blur(fx.blurMm * pxmm)
      .toColourspace(channels === 1 ? 'b-w' : 'srgb')
      .raw()
      .toBuffer();
    px = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const r = mulberry32(fx.seed ?? 1);
  const light = fx.unevenLight ?? 0;
  const lx = r(),
    ly = r();
  const streakX: number[] = [];
  for (let i = 0; i < (fx.streaks ?? 0); i++) streakX.push(Math.floor(r() * W));
  const noise = fx.noise ?? 0;
  // Noise from a table of normal deviates: a fresh deviate per pixel costs more than the rest.
  const table = new Float32Array(65536);
  for (let i = 0; i < table.length; i++) table[i] = gauss(r) * noise;
  let k = Math.floor(r() * 65536);
  const tone = fx.tone;
  const lut = new Float32Array(256);
  for (let v = 0; v < 256; v++) lut[v] = tone ? tone.black + (tone.white - tone.black) * (v / 255) ** tone.gamma : v;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let f = light > 0 ? 1 - light * Math.min(1, Math.hypot(x / W - lx, y / H - ly) / 1.2) : 1;
      if (through) f *= 1 - strength * (1 - through[y * W + x]! / 255);
      for (let c = 0; c < channels; c++) {
        const i = (y * W + x) * channels + c;
        let v = lut[px[i]!]! * f;
        if (noise > 0) {
          v += table[k]!;
          k = (k + 7919) & 65535;
        }
        px[i] = v < 0 ? 0 : Math.min(v, 255);
      }
    }
  }
  for (const sx of streakX)
    for (let y = 0; y < H; y++)
      for (let c = 0; c < channels; c++) {
        const i = (y * W + sx) * channels + c;
        px[i] = Math.round(px[i]! * 0.55);
      }
  for (let d = 0; d < (fx.dust ?? 0); d++) {
    const cx = r() * W,
      cy = r() * H,
      rad = Math.max(0.6, (0.025 + 0.075 * r()) * pxmm);
    for (let y = Math.max(0, Math.floor(cy - rad)); y <= Math.min(H - 1, cy + rad); y++)
      for (let x = Math.max(0, Math.floor(cx - rad)); x <= Math.min(W - 1, cx + rad); x++) {
        if ((x - cx) ** 2 + (y - cy) ** 2 <= rad * rad)
          for (let c = 0; c < channels; c++) px[(y * W + x) * channels + c] = 40;
      }
  }
  const enc = sharp(px, { raw: { width: W, height: H, channels } });
  // A greyscale scan is a one-channel JPEG, as scanners write it.
  const out = await (channels === 1 ? enc.toColourspace('b-w') : enc)
    .jpeg({ quality: fx.jpegQuality ?? 90 })
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
