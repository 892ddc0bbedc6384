// What students do to an area, as drawn marks with the truth each one stands for.
import type { SKRSContext2D } from '@napi-rs/canvas';
import { between, pick, type Random } from './random.ts';

/** Kinds that mean "filled" and kinds that must read empty. */
export const FILLED_KINDS = ['pen', 'pencil', 'light-pencil', 'partial', 'tick', 'cross'] as const;
export const EMPTY_KINDS = ['none', 'erasure', 'stray'] as const;
/** 'blot' is not a student's answer: an ink blot or scribble over a code, for failure cases. */
export type MarkKind = (typeof FILLED_KINDS)[number] | (typeof EMPTY_KINDS)[number] | 'blot';

export function isFilledKind(k: MarkKind): boolean {
  return (FILLED_KINDS as readonly string[]).includes(k);
}

export interface Mark { kind: MarkKind; x: number; y: number; w: number; h: number; seed: number }

function inkColour(r: Random, colour: boolean): string {
  if (!colour) { const g = Math.round(between(r, 10, 45)); return `rgb(${g},${g},${g})`; }
  return pick(r, ['rgb(20,30,110)', 'rgb(25,25,30)', 'rgb(10,40,90)']);
}

/** Draws in page millimetres (the context's transform maps them to pixels). */
export function drawMark(ctx: SKRSContext2D, m: Mark, r: Random, colour: boolean): void {
  const rx = m.w / 2, ry = m.h / 2;
  ctx.save();
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  switch (m.kind) {
    case 'none': break;
    case 'blot': {
      ctx.fillStyle = 'rgb(15,15,15)';
      ctx.beginPath(); ctx.ellipse(m.x, m.y, rx, ry, 0.3, 0, Math.PI * 2); ctx.fill();
      break;
    }
    case 'pen':
    case 'pencil':
    case 'light-pencil': {
      const cover = m.kind === 'pen' ? between(r, 0.8, 1.05) : between(r, 0.8, 1.0);
      let level: number;
      if (m.kind === 'pen') level = 0;
      else if (m.kind === 'pencil') level = between(r, 0.3, 0.5);
      else level = between(r, 0.52, 0.62);
      ctx.fillStyle = m.kind === 'pen' ? inkColour(r, colour) : `rgb(${Math.round(level * 255)},${Math.round(level * 255)},${Math.round(level * 255 + 6)})`;
      // Filling by hand: overlapping strokes, a little off-centre, edges not quite the ellipse.
      const ox = between(r, -0.4, 0.4), oy = between(r, -0.3, 0.3);
      ctx.beginPath();
      ctx.ellipse(m.x + ox, m.y + oy, rx * cover, ry * cover, between(r, -0.1, 0.1), 0, Math.PI * 2);
      ctx.fill();
      if (m.kind !== 'pen') {
        // Pencil grain: lighter specks.
        ctx.fillStyle = 'rgba(255,255,255,0.35)';
        for (let i = 0; i < 40; i++) ctx.fillRect(m.x + between(r, -rx, rx), m.y + between(r, -ry, ry), between(r, 0.1, 0.35), between(r, 0.05, 0.2));
      }
      break;
    }
    case 'partial': {
      // A hurried fill that covers half of the area.
      ctx.fillStyle = inkColour(r, colour);
      ctx.beginPath();
      ctx.ellipse(m.x + between(r, -0.6, 0.6), m.y, rx * between(r, 0.6, 0.75), ry * between(r, 0.65, 0.8), 0, 0, Math.PI * 2);
      ctx.fill();
      break;
    }
    case 'tick': {
      ctx.strokeStyle = inkColour(r, colour);
      ctx.lineWidth = between(r, 0.4, 0.7);
      const s = between(r, 0.9, 1.2);
      ctx.beginPath();
      ctx.moveTo(m.x - rx * 0.7 * s, m.y - ry * 0.05);
      ctx.lineTo(m.x - rx * 0.15 * s, m.y + ry * 0.75 * s);
      ctx.lineTo(m.x + rx * 0.8 * s, m.y - ry * 1.1 * s);
      ctx.stroke();
      break;
    }
    case 'cross': {
      ctx.strokeStyle = inkColour(r, colour);
      ctx.lineWidth = between(r, 0.35, 0.6);
      const s = between(r, 0.85, 1.15);
      ctx.beginPath();
      ctx.moveTo(m.x - rx * 0.8 * s, m.y - ry * 0.85 * s); ctx.lineTo(m.x + rx * 0.8 * s, m.y + ry * 0.85 * s);
      ctx.moveTo(m.x + rx * 0.8 * s, m.y - ry * 0.85 * s); ctx.lineTo(m.x - rx * 0.8 * s, m.y + ry * 0.85 * s);
      ctx.stroke();
      break;
    }
    case 'erasure': {
      // What an eraser leaves of a pencil fill: a smooth light-grey smudge and a few specks.
      const g = Math.round(between(r, 0.84, 0.92) * 255);
      ctx.fillStyle = `rgb(${g},${g},${g})`;
      ctx.beginPath();
      ctx.ellipse(m.x + between(r, -0.3, 0.3), m.y, rx * between(r, 0.8, 1.1), ry * between(r, 0.8, 1.1), 0, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = 'rgba(90,90,90,0.5)';
      for (let i = 0; i < 4; i++) ctx.fillRect(m.x + between(r, -rx, rx) * 0.8, m.y + between(r, -ry, ry) * 0.8, 0.15, 0.15);
      break;
    }
    case 'stray': {
      // Slips near an area that are not marks: a dot on the outline, a stroke beside it.
      ctx.strokeStyle = inkColour(r, colour);
      ctx.fillStyle = ctx.strokeStyle;
      ctx.lineWidth = 0.35;
      if (r() < 0.5) {
        const a = between(r, 0, Math.PI * 2);
        ctx.beginPath(); ctx.arc(m.x + Math.cos(a) * rx * 1.05, m.y + Math.sin(a) * ry * 1.05, 0.35, 0, Math.PI * 2); ctx.fill();
      } else {
        const y = m.y + pick(r, [-1, 1]) * ry * between(r, 1.15, 1.4);
        ctx.beginPath(); ctx.moveTo(m.x - rx * 0.9, y); ctx.lineTo(m.x + rx * 0.9, y + between(r, -0.3, 0.3)); ctx.stroke();
      }
      break;
    }
  }
  ctx.restore();
}
