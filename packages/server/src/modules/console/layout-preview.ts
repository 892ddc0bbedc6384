// A card template's layout drawn as SVG (the template page's preview): each printed side with its
// corner marks, identification strip, codes and answer areas where the layout puts them, in mm.
// Presentation attributes only (no style attribute), so the console's CSP needs nothing more.
import { html, type Html } from './html.ts';

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Side {
  sheet: number;
  side: string;
  fiducials?: Array<{ x: number; y: number; size: number }>;
  id_code?: Box & { cols: number; rows: number; cell: number; bits: number[] };
  qrcode?: Box;
  barcode?: Box;
  student_code?: Box;
  areas?: Array<{ chapter: number; index: number; x: number; y: number; w: number; h: number }>;
  student_cells?: Array<{ x: number; y: number; w: number; h: number }>;
}
export interface PreviewLayout {
  page?: { width_mm?: number; height_mm?: number };
  sides?: Side[];
  chapters?: Array<{ chapter: number; title: string; areas: number }>;
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 100) / 100 : 0);

function side(s: Side, w: number, h: number): Html {
  const id = s.id_code;
  return html`<figure class="side"><svg class="layout" viewBox="0 0 ${n(w)} ${n(h)}" width="${n(w * 1.6)}" height="${n(h * 1.6)}" role="img" aria-label="sheet ${s.sheet} ${s.side}">
<rect x="0" y="0" width="${n(w)}" height="${n(h)}" fill="#fff" stroke="#98a2b3" stroke-width="0.4"/>
${(s.fiducials ?? []).map((f) => html`<rect x="${n(f.x - f.size / 2)}" y="${n(f.y - f.size / 2)}" width="${n(f.size)}" height="${n(f.size)}" fill="#111827"/>`)}
${
  id
    ? html`<g>${id.bits.map((b, i) => (b ? html`<rect x="${n(id.x + (i % id.cols) * id.cell)}" y="${n(id.y + Math.floor(i / id.cols) * id.cell)}" width="${n(id.cell)}" height="${n(id.cell)}" fill="#111827"/>` : ''))}
<rect x="${n(id.x)}" y="${n(id.y)}" width="${n(id.cols * id.cell)}" height="${n(id.rows * id.cell)}" fill="none" stroke="#667085" stroke-width="0.3"/></g>`
    : ''
}
${s.qrcode ? html`<rect x="${n(s.qrcode.x)}" y="${n(s.qrcode.y)}" width="${n(s.qrcode.w)}" height="${n(s.qrcode.h)}" fill="#d0d5dd"/><text x="${n(s.qrcode.x + s.qrcode.w / 2)}" y="${n(s.qrcode.y + s.qrcode.h / 2 + 2)}" font-size="5" text-anchor="middle" fill="#344054">QR</text>` : ''}
${s.barcode ? html`<rect x="${n(s.barcode.x)}" y="${n(s.barcode.y)}" width="${n(s.barcode.w)}" height="${n(s.barcode.h)}" fill="none" stroke="#667085" stroke-width="0.4" stroke-dasharray="1.5 1"/>` : ''}
${(s.student_cells ?? []).map((c) => html`<rect x="${n(c.x - c.w / 2)}" y="${n(c.y - c.h / 2)}" width="${n(c.w)}" height="${n(c.h)}" rx="1" fill="none" stroke="#2456d3" stroke-width="0.3"/>`)}
${(s.areas ?? []).map((a) => html`<rect x="${n(a.x - a.w / 2)}" y="${n(a.y - a.h / 2)}" width="${n(a.w)}" height="${n(a.h)}" rx="1" fill="none" stroke="${a.chapter % 2 ? '#137a3d' : '#a15c07'}" stroke-width="0.35"/>`)}
</svg><figcaption>sheet ${s.sheet}, ${s.side} · ${(s.areas ?? []).length} areas</figcaption></figure>`;
}

export function layoutPreview(layout: PreviewLayout): Html {
  const w = n(layout.page?.width_mm) || 210;
  const h = n(layout.page?.height_mm) || 297;
  return html`<div id="layout-preview" class="sides">${(layout.sides ?? []).map((s) => side(s, w, h))}</div>`;
}
