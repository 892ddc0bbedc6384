// The device page's print form with the API's print options (docs/api.md, "POST
// /api/print/create", options.*), offered from the box's printer capability tree (media size → media type →
// duplex, borderless, quality, input slot), and the options a print task was created with.
// The form offers what the printer lists; the server still checks every value as the API does
// (PrintService.create), so a hand-made form is answered with the service's message.
import type { PrinterCapability, PrintJobOptions } from '@boxhub/protocol';
import { html, type Html } from './html.ts';
import { csrfField } from './widgets.ts';

/** The print form's fields as typed (strings; a missing field is undefined). */
export type PrintChoice = Record<string, string | undefined>;

const DUPLEX: Record<string, string> = {
  SVC_DP_NONE: 'one-sided',
  SVC_DP_NOTUMBLE: 'two-sided, long edge',
  SVC_DP_TUMBLE: 'two-sided, short edge',
};
/** A value for people: SVC_MS_A4 → A4, SVC_MT_PLAIN → plain (the value sent is the enum's). */
export function label(value: string): string {
  if (DUPLEX[value]) return DUPLEX[value];
  const bare = value.replace(/^SVC_[A-Z]{2}_/, '');
  return value.startsWith('SVC_MS_') ? bare : bare.toLowerCase().replace(/_/g, ' ');
}

function select(
  name: string,
  id: string,
  values: readonly string[],
  chosen: string | undefined,
  opts: { blank?: string; live?: string } = {},
): Html {
  const live = opts.live
    ? html` hx-get="${opts.live}" hx-trigger="change" hx-target="#print-options" hx-swap="outerHTML" hx-include="#print-options"`
    : '';
  return html`<select id="${id}" name="${name}" aria-label="${name.replace(/_/g, ' ')}"${live}>
${opts.blank !== undefined ? html`<option value=""${chosen ? '' : ' selected'}>${opts.blank}</option>` : ''}${values.map((v) => html`<option value="${v}"${v === chosen ? ' selected' : ''}>${label(v)}</option>`)}</select>`;
}

/**
 * The part of the form that depends on the chosen media size and type: picking another size or
 * type asks the server for this part again (htmx, `liveUrl`), so only what the printer lists for
 * that pair is offered. Without script the form still works; the server checks the pair.
 */
export function printOptionsPart(liveUrl: string, cap: PrinterCapability, chosen: PrintChoice): Html {
  const sizes = cap.media_sizes.map((s) => s.media_size);
  const sizeValue =
    chosen.media_size && sizes.includes(chosen.media_size as never)
      ? chosen.media_size
      : sizes.includes('SVC_MS_A4')
        ? 'SVC_MS_A4'
        : sizes[0];
  const size = cap.media_sizes.find((s) => s.media_size === sizeValue);
  const types = size?.media_types.map((t) => t.media_type) ?? [];
  const typeValue =
    chosen.media_type && types.includes(chosen.media_type as never)
      ? chosen.media_type
      : types.includes('SVC_MT_PLAIN')
        ? 'SVC_MT_PLAIN'
        : types[0];
  const type = size?.media_types.find((t) => t.media_type === typeValue);
  const keep = (v: string | undefined, allowed: readonly string[] | undefined) =>
    v && allowed?.includes(v) ? v : undefined;
  return html`<div id="print-options" class="options">
<label>Media size ${select('media_size', 'print-media-size', sizes, sizeValue, { live: liveUrl })}</label>
<label>Media type ${select('media_type', 'print-media-type', types, typeValue, { live: liveUrl })}</label>
<label>Sides ${select('duplex', 'print-duplex', type?.duplex ?? [], keep(chosen.duplex, type?.duplex), { blank: 'printer default' })}</label>
<label>Quality ${select('quality', 'print-quality', type?.quality ?? [], keep(chosen.quality, type?.quality), { blank: 'printer default' })}</label>
${type?.input_slot?.length ? html`<label>Tray ${select('input_slot', 'print-input-slot', type.input_slot, keep(chosen.input_slot, type.input_slot), { blank: "printer's choice" })}</label>` : ''}
${type?.borderless ? html`<label><input id="print-borderless" type="checkbox" name="borderless" value="1"${chosen.borderless === '1' ? ' checked' : ''}> borderless</label>` : ''}
</div>`;
}

export interface PrintFormData {
  url: string;
  csrf: string;
  capability?: PrinterCapability;
  chosen?: PrintChoice;
}

export function printForm(d: PrintFormData): Html {
  const c = d.chosen ?? {};
  const cap = d.capability;
  const on = (name: string, byDefault: boolean) =>
    (c[name] === undefined ? byDefault : c[name] === '1') ? ' checked' : '';
  return html`<form id="print-form" method="post" action="${d.url}/print" enctype="multipart/form-data">${csrfField(d.csrf)}
<input id="print-file" type="file" name="file" accept="application/pdf,image/jpeg,.pdf,.jpg,.jpeg" required aria-label="PDF or JPG file">
<input id="print-callback" type="text" name="callback_url" value="${c.callback_url ?? ''}" placeholder="callback URL (optional)" aria-label="print callback URL">
${
  cap
    ? html`${printOptionsPart(`${d.url}/print-options`, cap, c)}
<div class="options">
<label>Colour ${select('color_mode', 'print-color', cap.color_mode, c.color_mode, { blank: 'printer default' })}</label>
<label>Copies <input id="print-copies" type="number" name="number" min="1" max="999" value="${c.number ?? '1'}" aria-label="copies"></label>
<label>Pages <input id="print-pages" type="text" name="page_ranges" value="${c.page_ranges ?? ''}" maxlength="1000" placeholder="all, or e.g. 1-3,5" aria-label="page ranges"></label>
</div>
<div class="options">
<label><input id="print-collate" type="checkbox" name="collate" value="1"${on('collate', true)}> collate copies</label>
<label><input id="print-reverse" type="checkbox" name="reverse" value="1"${on('reverse', true)}> reverse order</label>
${cap.support_strict ? html`<label><input id="print-strict" type="checkbox" name="strict" value="1"${on('strict', false)}> strict (the printer counts the sides it printed)</label>` : ''}
</div>`
    : html`<p class="muted">No print options: the box reports no printer capability (see below).</p>`
}
<button id="print" type="submit">Print</button></form>`;
}

/** The options a print task was created with (as sent to the box). */
export function printJobView(job: { options: PrintJobOptions; file_type: 'pdf' | 'jpg' }): Html {
  const o = job.options;
  const ranges = o.page_ranges?.map((r) => (r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`)).join(',');
  return html`<div class="card"><h2>Options</h2><dl id="print-job">
<dt>File</dt><dd>${job.file_type.toUpperCase()}</dd>
<dt>Media</dt><dd>${label(o.media_size)}, ${label(o.media_type)}${o.borderless ? ', borderless' : ''}</dd>
<dt>Copies</dt><dd id="job-copies">${o.copies}${o.copies > 1 ? (o.collate ? ' (collated)' : ' (not collated)') : ''}</dd>
<dt>Sides</dt><dd id="job-duplex">${o.duplex ? label(o.duplex) : 'printer default'}</dd>
<dt>Colour</dt><dd>${o.color_mode ? label(o.color_mode) : 'printer default'}</dd>
<dt>Quality</dt><dd>${o.quality ? label(o.quality) : 'printer default'}</dd>
<dt>Tray</dt><dd>${o.input_slot ? label(o.input_slot) : "printer's choice"}</dd>
<dt>Pages</dt><dd>${ranges ?? 'all'}${o.reverse ? ', in reverse order' : ''}</dd>
<dt>Strict</dt><dd>${o.strict ? 'yes' : 'no'}</dd></dl></div>`;
}
