// Renders a printed side with students' marks as a scanner would deliver it: drawn straight
// at the scan resolution through the placement transform (rotation, skew, scale, offset,
// upside down), then blur, uneven light, show-through, streaks, noise and JPEG.
import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
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
  /** Paper grey level (1 = white). */
  paper?: number;
  seed?: number;
}

function drawOps(ctx: SKRSContext2D, ops: readonly DrawOp[]): void {
  for (const o of ops) {
    const g = Math.round(o.grey * 255);
    const col = `rgb(${g},${g},${g})`;
    if (o.op === 'rect') { ctx.fillStyle = col; ctx.fillRect(o.x, o.y, o.w, o.h); }
    else if (o.op === 'outline') { ctx.strokeStyle = col; ctx.lineWidth = o.width; ctx.setLineDash(o.dashed ? [2, 1.2] : []); ctx.strokeRect(o.x, o.y, o.w, o.h); ctx.setLineDash([]); }
    else if (o.op === 'ellipse') { ctx.strokeStyle = col; ctx.lineWidth = o.width; ctx.beginPath(); ctx.ellipse(o.cx, o.cy, o.rx, o.ry, 0, 0, Math.PI * 2); ctx.stroke(); }
    else {
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
  const W = Math.round(PAGE.width * pxmm), H = Math.round(PAGE.height * pxmm);
  const canvas = createCanvas(W, H);
  const ctx = canvas.getContext('2d');
  const paper = Math.round((fx.paper ?? 1) * 255);
  ctx.fillStyle = fx.colour ? `rgb(${paper},${paper - 3},${paper - 10})` : `rgb(${paper},${paper},${paper})`;
  ctx.fillRect(0, 0, W, H);
  const s = pxmm * (fx.scale ?? 1);
  const rot = ((fx.rotationDeg ?? 0) + (fx.upsideDown ? 180 : 0)) * Math.PI / 180;
  const skew = Math.tan(((fx.skewDeg ?? 0) * Math.PI) / 180);
  const cos = Math.cos(rot), sin = Math.sin(rot);
  const off = fx.offsetMm ?? { x: 0, y: 0 };
  // page mm -> pixels: centre, shear, rotate, scale, back to the image centre plus offset.
  const place = (mirror: boolean) => {
    const mx = mirror ? -1 : 1;
    const a = s * cos * mx, b = s * sin * mx, c = s * (cos * skew - sin), d = s * (sin * skew + cos);
    const cx = PAGE.width / 2, cy = PAGE.height / 2;
    ctx.setTransform(a, b, c, d, W / 2 + off.x * pxmm - (a * cx + c * cy), H / 2 + off.y * pxmm - (b * cx + d * cy));
  };
  if (fx.showThrough && fx.showThrough.strength > 0) {
    // Seen through the paper: mirrored, faint, soft.
    place(true);
    ctx.globalAlpha = fx.showThrough.strength;
    drawOps(ctx, fx.showThrough.ops);
    drawMarks(ctx, fx.showThrough.marks, false);
    ctx.globalAlpha = 1;
  }
  place(false);
  drawOps(ctx, ops);
  drawMarks(ctx, marks, fx.colour ?? false);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  if (fx.foldedCorner) {
    const c = fx.foldedCorner, L = 35 * pxmm;
    const x0 = c === 'tl' || c === 'bl' ? 0 : W, y0 = c === 'tl' || c === 'tr' ? 0 : H;
    const sx = x0 === 0 ? 1 : -1, sy = y0 === 0 ? 1 : -1;
    ctx.fillStyle = `rgb(${paper},${paper},${paper})`;
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x0 + sx * L, y0); ctx.lineTo(x0, y0 + sy * L); ctx.closePath(); ctx.fill();
  }
  const rgba = ctx.getImageData(0, 0, W, H).data;

  const channels = fx.colour ? 3 : 1;
  let px = new Uint8Array(W * H * channels);
  for (let i = 0, j = 0; i < W * H; i++, j += 4) {
    if (channels === 1) px[i] = Math.round(0.299 * rgba[j]! + 0.587 * rgba[j + 1]! + 0.114 * rgba[j + 2]!);
    else { px[i * 3] = rgba[j]!; px[i * 3 + 1] = rgba[j + 1]!; px[i * 3 + 2] = rgba[j + 2]!; }
  }
  if (fx.blurMm && fx.blurMm * pxmm > 0.35) {
    const b = await sharp(px, { raw: { width: W, height: H, channels } }).blur(fx.blurMm * pxmm).toColourspace(channels === 1 ? 'b-w' : 'srgb').raw().toBuffer();
    px = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const r = mulberry32(fx.seed ?? 1);
  const light = fx.unevenLight ?? 0;
  const lx = r(), ly = r();
  const streakX: number[] = [];
  for (let i = 0; i < (fx.streaks ?? 0); i++) streakX.push(Math.floor(r() * W));
  const noise = fx.noise ?? 0;
  // Noise from a table of normal deviates: a fresh deviate per pixel costs more than the rest.
  const table = new Float32Array(65536);
  for (let i = 0; i < table.length; i++) table[i] = gauss(r) * noise;
  let k = Math.floor(r() * 65536);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const f = light > 0 ? 1 - light * Math.min(1, Math.hypot(x / W - lx, y / H - ly) / 1.2) : 1;
      for (let c = 0; c < channels; c++) {
        const i = (y * W + x) * channels + c;
        let v = px[i]! * f;
        if (noise > 0) { v += table[k]!; k = (k + 7919) & 65535; }
        px[i] = v < 0 ? 0 : v > 255 ? 255 : v;
      }
    }
  }
  for (const sx of streakX) for (let y = 0; y < H; y++) for (let c = 0; c < channels; c++) { const i = (y * W + sx) * channels + c; px[i] = Math.round(px[i]! * 0.55); }
  const enc = sharp(px, { raw: { width: W, height: H, channels } });
  // A greyscale scan is a one-channel JPEG, as scanners write it.
  const out = await (channels === 1 ? enc.toColourspace('b-w') : enc).jpeg({ quality: fx.jpegQuality ?? 90 }).toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
