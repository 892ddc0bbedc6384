// What students do to an area, as drawn marks with the truth each one stands for.
// Generator A of the benchmark (canvas drawing); bench/recognizer/independent is generator B,
// built differently on purpose and used for evaluation only.
import type { SKRSContext2D } from '@napi-rs/canvas';
import { between, pick, type Random } from './random.ts';

/**
 * Kinds that mean "filled" and kinds that must read empty. Darkness is of full black (0 =
 * paper, 1 = black): pencil 0.38-0.7; light pencil 0.20-0.30 (clearly marked to a person, the
 * class schools miss most); faint pencil 0.15-0.20; very faint pencil 0.12-0.15 (only from a
 * light hand, whose other fills say how it writes); thin ticks and crosses have 0.3-0.4 mm
 * strokes; small marks cover a third to a half of the area, off-centre. A light hand also
 * shades half an area ('light-partial') or leaves a small dot ('light-small') at its own faint
 * darkness (0.12-0.30), and a finger drags graphite across an area ('smudge': soft-edged, light,
 * off-centre, often larger than the area; empty). These three were added after generator B
 * showed them and A had no example to set a rule on; they are drawn here independently of B.
 */
export const FILLED_KINDS = [
  'pen',
  'pencil',
  'light-pencil',
  'faint-pencil',
  'very-faint-pencil',
  'partial',
  'light-partial',
  'small',
  'light-small',
  'tick',
  'thin-tick',
  'cross',
  'thin-cross',
] as const;
export const EMPTY_KINDS = ['none', 'erasure', 'smudge', 'stray'] as const;
/** 'blot' is not a student's answer: an ink blot or scribble over a code, for failure cases. */
export type MarkKind = (typeof FILLED_KINDS)[number] | (typeof EMPTY_KINDS)[number] | 'blot';

export function isFilledKind(k: MarkKind): boolean {
  return (FILLED_KINDS as readonly string[]).includes(k);
}

/**
 * `level`: the darkness of a pencil fill or residue, or of a pencil stroke (ticks, crosses,
 * small and partial marks), when the student's hand decides it; otherwise drawn at random.
 */
export interface Mark {
  kind: MarkKind;
  x: number;
  y: number;
  w: number;
  h: number;
  seed: number;
  level?: number;
}

/** The pencil kind a fill of this darkness is reported as. */
export function pencilKind(darkness: number): MarkKind {
  return darkness >= 0.3
    ? 'pencil'
    : darkness >= 0.2
      ? 'light-pencil'
      : darkness >= 0.15
        ? 'faint-pencil'
        : 'very-faint-pencil';
}

function inkColour(r: Random, colour: boolean): string {
  if (!colour) {
    const g = Math.round(between(r, 10, 45));
    return `rgb(${g},${g},${g})`;
  }
  return pick(r, ['rgb(20,30,110)', 'rgb(25,25,30)', 'rgb(10,40,90)']);
}

/** Pen, or a dark pencil (darkness 0.55-0.75), for strokes. */
function strokeColour(r: Random, colour: boolean, level?: number): string {
  if (level !== undefined) return grey(1 - level);
  if (r() < 0.7) return inkColour(r, colour);
  const g = Math.round(between(r, 0.25, 0.45) * 255);
  return `rgb(${g},${g},${g + 4})`;
}

/** Pencil grain: lighter specks where the graphite skipped the paper's valleys. */
function grain(ctx: SKRSContext2D, r: Random, cx: number, cy: number, sx: number, sy: number, n: number): void {
  ctx.save();
  ctx.globalCompositeOperation = 'screen';
  ctx.fillStyle = 'rgba(255,255,255,0.35)';
  for (let i = 0; i < n; i++)
    ctx.fillRect(cx + between(r, -sx, sx), cy + between(r, -sy, sy), between(r, 0.1, 0.35), between(r, 0.05, 0.2));
  ctx.restore();
}

function grey(level: number): string {
  const g = Math.round(level * 255);
  return `rgb(${g},${g},${Math.min(255, g + 5)})`;
}

/**
 * Draws in page millimetres (the context's transform maps them to pixels). Marks darken what is
 * under them (multiply), as graphite and ink do: a light pencil fill over grey paper stays as
 * dark relative to the paper as on white paper, and the printed outline shows through it.
 */
export function drawMark(ctx: SKRSContext2D, m: Mark, r: Random, colour: boolean): void {
  const rx = m.w / 2,
    ry = m.h / 2;
  ctx.save();
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.globalCompositeOperation = 'multiply';
  switch (m.kind) {
    case 'none':
      break;
    case 'blot': {
      ctx.fillStyle = 'rgb(15,15,15)';
      ctx.beginPath();
      ctx.ellipse(m.x, m.y, rx, ry, 0.3, 0, Math.PI * 2);
      ctx.fill();
      break;
    }
    case 'pen':
    case 'pencil':
    case 'light-pencil':
    case 'faint-pencil':
    case 'very-faint-pencil': {
      const cover = m.kind === 'pen' ? between(r, 0.8, 1.05) : between(r, 0.8, 1.0);
      let darkness: number;
      if (m.kind === 'pen') darkness = 1;
      else if (m.level !== undefined) darkness = m.level;
      else if (m.kind === 'pencil') darkness = between(r, 0.38, 0.7);
      else if (m.kind === 'light-pencil') darkness = between(r, 0.2, 0.3);
      else if (m.kind === 'faint-pencil') darkness = between(r, 0.15, 0.2);
      else darkness = between(r, 0.12, 0.15);
      ctx.fillStyle = m.kind === 'pen' ? inkColour(r, colour) : grey(1 - darkness);
      // Filling by hand: a little off-centre, edges not quite the ellipse.
      const ox = between(r, -0.4, 0.4),
        oy = between(r, -0.3, 0.3);
      ctx.beginPath();
      ctx.ellipse(m.x + ox, m.y + oy, rx * cover, ry * cover, between(r, -0.1, 0.1), 0, Math.PI * 2);
      ctx.fill();
      if (m.kind !== 'pen') {
        // Pencil grain: lighter specks where the graphite skipped the paper's valleys.
        ctx.globalCompositeOperation = 'screen';
        ctx.fillStyle = 'rgba(255,255,255,0.35)';
        for (let i = 0; i < 40; i++)
          ctx.fillRect(
            m.x + between(r, -rx, rx),
            m.y + between(r, -ry, ry),
            between(r, 0.1, 0.35),
            between(r, 0.05, 0.2),
          );
      }
      break;
    }
    case 'partial': {
      // A hurried fill that covers half of the area.
      ctx.fillStyle = m.level !== undefined ? grey(1 - m.level) : inkColour(r, colour);
      ctx.beginPath();
      ctx.ellipse(
        m.x + between(r, -0.6, 0.6),
        m.y,
        rx * between(r, 0.6, 0.75),
        ry * between(r, 0.65, 0.8),
        0,
        0,
        Math.PI * 2,
      );
      ctx.fill();
      break;
    }
    case 'light-partial': {
      // Light shading over part of the area (a hurried fill by a light hand): one side of it,
      // with pencil grain.
      const d = m.level ?? between(r, 0.15, 0.3);
      ctx.fillStyle = grey(1 - d);
      const side = r() < 0.5 ? -1 : 1,
        fx = between(r, 0.5, 0.72),
        fy = between(r, 0.6, 0.85);
      const cx = m.x + side * rx * (1 - fx) * between(r, 0.6, 1),
        cy = m.y + between(r, -0.25, 0.25);
      ctx.beginPath();
      ctx.ellipse(cx, cy, rx * fx, ry * fy, between(r, -0.2, 0.2), 0, Math.PI * 2);
      ctx.fill();
      grain(ctx, r, cx, cy, rx * fx, ry * fy, 20);
      break;
    }
    case 'light-small': {
      // A small light dot off-centre: a light hand touching the area rather than filling it.
      const d = m.level ?? between(r, 0.15, 0.3);
      ctx.fillStyle = grey(1 - d);
      const f = between(r, 0.4, 0.6),
        sx = rx * f,
        sy = ry * f;
      const cx = m.x + between(r, -1, 1) * (rx - sx) * 0.9,
        cy = m.y + between(r, -1, 1) * (ry - sy) * 0.9;
      ctx.beginPath();
      ctx.ellipse(cx, cy, sx, sy, between(r, -0.3, 0.3), 0, Math.PI * 2);
      ctx.fill();
      grain(ctx, r, cx, cy, sx, sy, 10);
      break;
    }
    case 'smudge': {
      // A finger's graphite smear: darkest where the finger pressed, fading to nothing, stretched
      // along the drag, off-centre and often wider than the area.
      const d = m.level ?? between(r, 0.04, 0.1);
      const sx = rx * between(r, 0.8, 1.5),
        sy = ry * between(r, 0.5, 1.0);
      const cx = m.x + between(r, -0.5, 0.5) * rx,
        cy = m.y + between(r, -0.5, 0.5) * ry;
      ctx.translate(cx, cy);
      ctx.rotate(between(r, -0.6, 0.6));
      ctx.scale(1, sy / sx);
      const g = ctx.createRadialGradient(between(r, -0.3, 0.3) * sx, 0, 0, 0, 0, sx);
      g.addColorStop(0, grey(1 - d));
      g.addColorStop(between(r, 0.3, 0.6), grey(1 - d * 0.8));
      g.addColorStop(1, 'rgb(255,255,255)');
      ctx.fillStyle = g;
      ctx.beginPath();
      ctx.arc(0, 0, sx, 0, Math.PI * 2);
      ctx.fill();
      break;
    }
    case 'small': {
      // A small blob or dot, off-centre but inside the area: a third to a half of it.
      ctx.fillStyle =
        m.level !== undefined ? grey(1 - m.level) : r() < 0.6 ? inkColour(r, colour) : grey(between(r, 0.3, 0.5));
      const f = between(r, 0.55, 0.7);
      const sx = rx * f,
        sy = ry * f;
      const ox = between(r, -1, 1) * (rx - sx) * 0.9,
        oy = between(r, -1, 1) * (ry - sy) * 0.9;
      ctx.beginPath();
      ctx.ellipse(m.x + ox, m.y + oy, sx, sy, between(r, -0.3, 0.3), 0, Math.PI * 2);
      ctx.fill();
      break;
    }
    case 'tick':
    case 'thin-tick': {
      ctx.strokeStyle = strokeColour(r, colour, m.level);
      ctx.lineWidth = m.kind === 'tick' ? between(r, 0.4, 0.7) : between(r, 0.3, 0.4);
      const s = between(r, 0.75, 1.2);
      const ox = between(r, -0.8, 0.8),
        oy = between(r, -0.4, 0.4);
      ctx.beginPath();
      ctx.moveTo(m.x + ox - rx * 0.7 * s, m.y + oy - ry * 0.05);
      ctx.lineTo(m.x + ox - rx * 0.15 * s, m.y + oy + ry * 0.75 * s);
      ctx.lineTo(m.x + ox + rx * 0.8 * s, m.y + oy - ry * 1.1 * s);
      ctx.stroke();
      break;
    }
    case 'cross':
    case 'thin-cross': {
      ctx.strokeStyle = strokeColour(r, colour, m.level);
      ctx.lineWidth = m.kind === 'cross' ? between(r, 0.4, 0.6) : between(r, 0.3, 0.4);
      const s = between(r, 0.75, 1.15);
      const ox = between(r, -0.6, 0.6),
        oy = between(r, -0.3, 0.3);
      ctx.beginPath();
      ctx.moveTo(m.x + ox - rx * 0.8 * s, m.y + oy - ry * 0.85 * s);
      ctx.lineTo(m.x + ox + rx * 0.8 * s, m.y + oy + ry * 0.85 * s);
      ctx.moveTo(m.x + ox + rx * 0.8 * s, m.y + oy - ry * 0.85 * s);
      ctx.lineTo(m.x + ox - rx * 0.8 * s, m.y + oy + ry * 0.85 * s);
      ctx.stroke();
      break;
    }
    case 'erasure': {
      // What an eraser leaves of a pencil fill: a light smooth smudge (darkness 0.04-0.12, or a
      // part of the student's own pencil darkness) and a few specks.
      ctx.fillStyle = grey(1 - (m.level ?? between(r, 0.04, 0.12)));
      ctx.beginPath();
      ctx.ellipse(
        m.x + between(r, -0.3, 0.3),
        m.y,
        rx * between(r, 0.8, 1.1),
        ry * between(r, 0.8, 1.1),
        0,
        0,
        Math.PI * 2,
      );
      ctx.fill();
      ctx.fillStyle = 'rgba(90,90,90,0.5)';
      for (let i = 0; i < 4; i++)
        ctx.fillRect(m.x + between(r, -rx, rx) * 0.8, m.y + between(r, -ry, ry) * 0.8, 0.15, 0.15);
      break;
    }
    case 'stray': {
      // Slips near an area that are not marks: a dot on the outline, a stroke beside it.
      ctx.strokeStyle = inkColour(r, colour);
      ctx.fillStyle = ctx.strokeStyle;
      ctx.lineWidth = 0.35;
      if (r() < 0.5) {
        const a = between(r, 0, Math.PI * 2);
        ctx.beginPath();
        ctx.arc(m.x + Math.cos(a) * rx * 1.05, m.y + Math.sin(a) * ry * 1.05, 0.35, 0, Math.PI * 2);
        ctx.fill();
      } else {
        const y = m.y + pick(r, [-1, 1]) * ry * between(r, 1.15, 1.4);
        ctx.beginPath();
        ctx.moveTo(m.x - rx * 0.9, y);
        ctx.lineTo(m.x + rx * 0.9, y + between(r, -0.3, 0.3));
        ctx.stroke();
      }
      break;
    }
  }
  ctx.restore();
}
