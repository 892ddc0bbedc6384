// Generator B's marks: SVG drawn by librsvg (through sharp), shapes of their own — scribbled pen
// fills, pencil as hatching, curved ticks, crosses and slashes, dots off-centre, erasure
// residue with leftover strokes, finger smudges. Shares no drawing code with generator A.
import { sfc32, type Rng } from './rng.ts';

export const B_FILLED = [
  'pen',
  'pencil',
  'light-pencil',
  'faint-pencil',
  'partial',
  'small',
  'tick',
  'thin-tick',
  'cross',
  'thin-cross',
  'slash',
] as const;
export const B_EMPTY = ['none', 'erasure', 'smudge', 'stray'] as const;
export type BKind = (typeof B_FILLED)[number] | (typeof B_EMPTY)[number];

/** `level`: a pencil hand's darkness for this mark (fill, residue or line); pen and random marks leave it out. */
export interface BMark {
  kind: BKind;
  x: number;
  y: number;
  w: number;
  h: number;
  seed: number;
  level?: number;
}

const f = (v: number) => v.toFixed(3);

function penColour(r: Rng, colour: boolean): string {
  if (!colour) return r.pick(['#111', '#1a1a1a', '#262626', '#0d0d0d']);
  return r.pick(['#101c6e', '#0a2a8a', '#151515', '#1e2d5c']);
}

/** A pencil stroke: graphite grey at an opacity (darkness on paper, via multiply). */
function graphite(r: Rng): string {
  const g = Math.round(r.range(20, 45));
  return `rgb(${g},${g},${g + 6})`;
}

/** Pencil as hatching: lines across the ellipse whose mean darkness is `darkness`. */
function hatch(r: Rng, m: BMark, darkness: number, cover: number): string {
  const rx = (m.w / 2) * cover,
    ry = (m.h / 2) * cover;
  const cx = m.x + r.range(-0.35, 0.35),
    cy = m.y + r.range(-0.25, 0.25);
  const angle = (r.range(-65, 65) * Math.PI) / 180;
  const spacing = r.range(0.16, 0.3);
  const coverage = r.range(0.6, 0.95);
  const width = spacing * coverage;
  const lineDark = Math.min(1, darkness / coverage);
  const ca = Math.cos(angle),
    sa = Math.sin(angle);
  let out = '';
  // Lines perpendicular to direction (ca, sa), clipped to the ellipse analytically.
  const reach = Math.max(rx, ry);
  for (let t = -reach; t <= reach; t += spacing) {
    // Points p = c + t*n + u*d, n = (-sa, ca), d = (ca, sa); solve the ellipse for u.
    const nx = -sa * t,
      ny = ca * t;
    const A = (ca * ca) / (rx * rx) + (sa * sa) / (ry * ry);
    const B = 2 * ((nx * ca) / (rx * rx) + (ny * sa) / (ry * ry));
    const C = (nx * nx) / (rx * rx) + (ny * ny) / (ry * ry) - 1;
    const disc = B * B - 4 * A * C;
    if (disc <= 0) continue;
    const u0 = ((-B - Math.sqrt(disc)) / (2 * A)) * r.range(0.9, 1.04),
      u1 = ((-B + Math.sqrt(disc)) / (2 * A)) * r.range(0.9, 1.04);
    const op = Math.min(1, lineDark * r.range(0.85, 1.15));
    out += `<line x1="${f(cx + nx + u0 * ca)}" y1="${f(cy + ny + u0 * sa)}" x2="${f(cx + nx + u1 * ca)}" y2="${f(cy + ny + u1 * sa)}" stroke="${graphite(r)}" stroke-opacity="${f(op)}" stroke-width="${f(width)}"/>`;
  }
  return out;
}

/** A pen scribble back and forth over the ellipse (or one side of it). */
function scribble(r: Rng, m: BMark, colour: boolean, side: -1 | 0 | 1 = 0, level?: number): string {
  const rx = m.w / 2,
    ry = m.h / 2;
  const sw = r.range(0.55, 0.9);
  const rows = Math.ceil((2 * ry) / (sw * r.range(0.7, 0.95)));
  const pts: string[] = [];
  for (let i = 0; i <= rows; i++) {
    const y = -ry * 0.92 + (1.84 * ry * i) / rows;
    const half = rx * Math.sqrt(Math.max(0, 1 - (y * y) / (ry * ry))) * r.range(0.88, 1.04);
    const lo = side === 1 ? -half * 0.1 : -half,
      hi = side === -1 ? half * 0.1 : half;
    const x = i % 2 === 0 ? lo : hi;
    pts.push(`${f(m.x + x + r.range(-0.15, 0.15))},${f(m.y + y + r.range(-0.1, 0.1))}`);
  }
  const ink =
    level === undefined ? `stroke="${penColour(r, colour)}"` : `stroke="${graphite(r)}" stroke-opacity="${f(level)}"`;
  return `<polyline points="${pts.join(' ')}" fill="none" ${ink} stroke-width="${f(sw)}" stroke-linejoin="round" stroke-linecap="round"/>`;
}

function strokeStyle(r: Rng, colour: boolean, width: number, level?: number): string {
  if (level !== undefined)
    return `fill="none" stroke="${graphite(r)}" stroke-opacity="${f(level)}" stroke-width="${f(width)}" stroke-linecap="round" stroke-linejoin="round"`;
  // Pen, or a dark pencil line (opacity 0.6-0.85).
  if (r.next() < 0.7)
    return `fill="none" stroke="${penColour(r, colour)}" stroke-width="${f(width)}" stroke-linecap="round" stroke-linejoin="round"`;
  return `fill="none" stroke="${graphite(r)}" stroke-opacity="${f(r.range(0.6, 0.85))}" stroke-width="${f(width)}" stroke-linecap="round" stroke-linejoin="round"`;
}

function transform(r: Rng, m: BMark, maxDeg: number, scaleLo: number, scaleHi: number, dx: number, dy: number): string {
  return `transform="translate(${f(m.x + r.range(-dx, dx))} ${f(m.y + r.range(-dy, dy))}) rotate(${f(r.range(-maxDeg, maxDeg))}) scale(${f(r.range(scaleLo, scaleHi))})"`;
}

/** SVG elements for one mark, in page millimetres. */
export function markSvg(m: BMark, colour: boolean): string {
  const r = sfc32(m.seed);
  const rx = m.w / 2,
    ry = m.h / 2;
  switch (m.kind) {
    case 'none':
      return '';
    case 'pen':
      return scribble(r, m, colour);
    case 'partial':
      return scribble(r, { ...m, w: m.w * 0.95 }, colour, r.next() < 0.5 ? -1 : 1, m.level);
    case 'pencil':
      return hatch(r, m, m.level ?? r.range(0.4, 0.7), r.range(0.85, 1.02));
    case 'light-pencil':
      return hatch(r, m, m.level ?? r.range(0.2, 0.3), r.range(0.85, 1.0));
    case 'faint-pencil':
      return hatch(r, m, m.level ?? r.range(0.15, 0.2), r.range(0.85, 1.0));
    case 'small': {
      const s = r.range(0.8, 1.3);
      const ox = r.range(-1, 1) * (rx - s) * 0.85,
        oy = r.range(-1, 1) * Math.max(0, ry - s * 0.8) * 0.85;
      const fill =
        m.level !== undefined
          ? `fill="${graphite(r)}" fill-opacity="${f(m.level)}"`
          : r.next() < 0.6
            ? `fill="${penColour(r, colour)}"`
            : `fill="${graphite(r)}" fill-opacity="${f(r.range(0.55, 0.8))}"`;
      return `<ellipse cx="${f(m.x + ox)}" cy="${f(m.y + oy)}" rx="${f(s)}" ry="${f(s * r.range(0.7, 1))}" ${fill}/>`;
    }
    case 'tick':
    case 'thin-tick': {
      const w = m.kind === 'tick' ? r.range(0.4, 0.65) : r.range(0.3, 0.4);
      const style = strokeStyle(r, colour, w, m.level);
      // A check drawn in one motion: short down-stroke, long curved up-stroke.
      return `<path ${transform(r, m, 20, 0.65, 1.1, 0.7, 0.35)} d="M ${f(-rx * 0.65)} ${f(-ry * 0.1)} Q ${f(-rx * 0.35)} ${f(ry * 0.35)} ${f(-rx * 0.15)} ${f(ry * 0.7)} Q ${f(rx * 0.2)} ${f(-ry * 0.3)} ${f(rx * 0.85)} ${f(-ry * 1.05)}" ${style}/>`;
    }
    case 'cross':
    case 'thin-cross': {
      const w = m.kind === 'cross' ? r.range(0.4, 0.6) : r.range(0.3, 0.4);
      const style = strokeStyle(r, colour, w, m.level);
      const bend = () => f(r.range(-0.3, 0.3));
      return `<g ${transform(r, m, 15, 0.7, 1.05, 0.5, 0.3)} ${style}><path d="M ${f(-rx * 0.75)} ${f(-ry * 0.8)} Q ${bend()} ${bend()} ${f(rx * 0.75)} ${f(ry * 0.8)}"/><path d="M ${f(rx * 0.7)} ${f(-ry * 0.85)} Q ${bend()} ${bend()} ${f(-rx * 0.7)} ${f(ry * 0.85)}"/></g>`;
    }
    case 'slash': {
      const style = strokeStyle(r, colour, r.range(0.3, 0.6), m.level);
      const dir = r.next() < 0.8 ? 1 : -1;
      return `<path ${transform(r, m, 10, 0.75, 1.05, 0.5, 0.2)} d="M ${f(-rx * 0.8 * dir)} ${f(ry * 0.8)} L ${f(rx * 0.8 * dir)} ${f(-ry * 0.8)}" ${style}/>`;
    }
    case 'erasure': {
      // A rubbed-out fill: a soft grey residue and a few short leftover strokes.
      const id = `e${m.seed}`;
      // Soft edges from a radial gradient (librsvg's blur filter costs a second per mark).
      const o = m.level ?? r.range(0.03, 0.11);
      let s = `<radialGradient id="${id}"><stop offset="0" stop-color="${graphite(r)}" stop-opacity="${f(o)}"/><stop offset="0.75" stop-color="#222" stop-opacity="${f(o * 0.9)}"/><stop offset="1" stop-color="#222" stop-opacity="0"/></radialGradient>`;
      s += `<ellipse cx="${f(m.x + r.range(-0.4, 0.4))}" cy="${f(m.y + r.range(-0.2, 0.2))}" rx="${f(rx * r.range(0.9, 1.2))}" ry="${f(ry * r.range(0.9, 1.2))}" fill="url(#${id})"/>`;
      const bits = Math.floor(r.range(1, 4));
      for (let i = 0; i < bits; i++) {
        const x = m.x + r.range(-rx, rx) * 0.7,
          y = m.y + r.range(-ry, ry) * 0.7,
          len = r.range(0.4, 1.2),
          a = r.range(0, Math.PI);
        s += `<line x1="${f(x)}" y1="${f(y)}" x2="${f(x + Math.cos(a) * len)}" y2="${f(y + Math.sin(a) * len)}" stroke="${graphite(r)}" stroke-opacity="${f(r.range(0.08, 0.16))}" stroke-width="${f(r.range(0.1, 0.2))}"/>`;
      }
      return s;
    }
    case 'smudge': {
      // A finger's graphite smudge: soft, light, larger than the area and off-centre.
      const id = `s${m.seed}`;
      const o = r.range(0.04, 0.09);
      return `<radialGradient id="${id}"><stop offset="0" stop-color="${graphite(r)}" stop-opacity="${f(o)}"/><stop offset="0.5" stop-color="#222" stop-opacity="${f(o * 0.8)}"/><stop offset="1" stop-color="#222" stop-opacity="0"/></radialGradient><ellipse cx="${f(m.x + r.range(-1.5, 1.5))}" cy="${f(m.y + r.range(-0.8, 0.8))}" rx="${f(rx * r.range(1.1, 1.6))}" ry="${f(ry * r.range(1.1, 1.5))}" fill="url(#${id})"/>`;
    }
    case 'stray': {
      const style = `stroke="${penColour(r, colour)}" stroke-width="${f(r.range(0.3, 0.45))}" stroke-linecap="round" fill="none"`;
      const v = r.next();
      if (v < 0.35) {
        // A stroke that stops at the outline, from outside.
        const a = r.range(0, Math.PI * 2),
          len = r.range(1, 2.5);
        const ex = m.x + Math.cos(a) * rx * 1.03,
          ey = m.y + Math.sin(a) * ry * 1.03;
        return `<line x1="${f(ex + Math.cos(a) * len)}" y1="${f(ey + Math.sin(a) * len)}" x2="${f(ex)}" y2="${f(ey)}" ${style}/>`;
      }
      if (v < 0.7) {
        // A dot beside the area.
        const side = r.next() < 0.5 ? -1 : 1;
        return `<circle cx="${f(m.x + side * (rx + r.range(0.8, 1.6)))}" cy="${f(m.y + r.range(-ry, ry))}" r="${f(r.range(0.2, 0.4))}" fill="${penColour(r, colour)}"/>`;
      }
      // Underlining the printed number above the area.
      const y = m.y - ry - r.range(0.6, 1.1);
      return `<line x1="${f(m.x - 1.2)}" y1="${f(y)}" x2="${f(m.x + 1.2)}" y2="${f(y + r.range(-0.2, 0.2))}" ${style}/>`;
    }
  }
}

export function isFilledB(k: BKind): boolean {
  return (B_FILLED as readonly string[]).includes(k);
}
