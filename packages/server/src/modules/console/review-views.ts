// The review loop's pages (docs/console.md, "Review"): a run's students that need a person,
// and one student's pages with what was read drawn over them, where the teacher sets areas,
// types the student number and marks sheets that are not a card. The overlay is SVG over the
// page image; each area is a checkbox placed on it (inside the SVG's foreignObject), so the
// page works without script and the CSP needs no inline style.
import type { api } from '@boxhub/protocol';
import type { RecognitionStudentReview } from './review-pages.ts';
import { html, when, type Html } from './html.ts';
import { csrfField, notice } from './widgets.ts';

const enc = encodeURIComponent;
const runUrl = (uuid: string) => `/console/recognition/${enc(uuid)}`;
export const studentUrl = (uuid: string, n: number) => `${runUrl(uuid)}/students/${n}`;
const r1 = (v: number) => Math.round(v * 10) / 10;
const pts = (p: ReadonlyArray<{ x: number; y: number }>) => p.map((q) => `${r1(q.x)},${r1(q.y)}`).join(' ');

/** The run page's list of students that need review (part of its live part). */
export function reviewList(uuid: string, items: api.ReviewItem[]): Html {
  const open = items.filter((i) => i.status === 'open').length;
  return html`<div class="card" id="review"><h2>Needs review <span class="muted">(${open} open of ${items.length})</span></h2>
${
  items.length === 0
    ? html`<p class="muted">No student needs review: no uncertain area, no error 1001-1004.</p>`
    : html`<table id="review-items"><thead><tr><th>#</th><th>Why</th><th>Now</th><th></th></tr></thead><tbody>
${items.map(
  (
    i,
  ) => html`<tr class="review-item" data-student="${i.student}"><td>${i.student}</td><td>${i.reasons.map((r) => html`<span class="detail">${r}</span><br>`)}</td>
<td>${i.status === 'open' ? html`<span class="pill wait">open</span>` : html`<span class="pill on">resolved</span>`}${i.revision ? html` <span class="muted">revision ${i.revision}</span>` : ''}</td>
<td><a class="review-link" href="${studentUrl(uuid, i.student)}">Review</a></td></tr>`,
)}
</tbody></table>`
}</div>`;
}

function pageSvg(uuid: string, p: api.ReviewPage, editable: boolean): Html {
  const img = `${runUrl(uuid)}/pages/${p.page_number}/image`;
  if (!p.located || p.width === 0) {
    return html`<p class="err page-detail">Page ${p.page_number}: ${p.detail ?? 'not located'}; nothing to outline.</p>
<img class="page-img" src="${img}" alt="page ${p.page_number} as scanned" width="${p.width || 600}" height="${p.height || 848}">`;
  }
  const areas = p.areas.map((a) => {
    const name = `a_${a.chapter}_${a.index}`;
    const label = `chapter ${a.chapter} area ${a.index}: ${a.state}${a.state === 'uncertain' ? `, score ${a.score.toFixed(2)}` : ''}`;
    return html`<g class="ov-area ov-${a.state}" data-area="${a.chapter}.${a.index}"><ellipse cx="${a.cx}" cy="${a.cy}" rx="${r1(a.rx + 3)}" ry="${r1(a.ry + 3)}" transform="rotate(${a.angle} ${a.cx} ${a.cy})"></ellipse>
${a.state === 'uncertain' ? html`<text x="${r1(a.cx - a.rx)}" y="${r1(a.cy + a.ry + 30)}" class="ov-score">${a.score.toFixed(2)}</text>` : ''}
${editable ? html`<foreignObject x="${r1(a.cx - a.rx - 3)}" y="${r1(a.cy - a.ry - 3)}" width="${r1(2 * a.rx + 6)}" height="${r1(2 * a.ry + 6)}"><label class="area-pick" title="${label}"><input type="checkbox" name="${name}" value="1" aria-label="${label}"${a.state === 'filled' ? html` checked` : ''}></label></foreignObject>` : ''}</g>`;
  });
  return html`<svg class="page-svg" viewBox="0 0 ${p.width} ${p.height}" role="img" aria-label="page ${p.page_number} with what was read">
<image href="${img}" x="0" y="0" width="${p.width}" height="${p.height}"></image>
${p.qrcode ? html`<polygon class="ov-qr" points="${pts(p.qrcode.outline)}"></polygon>` : ''}
${p.student_number ? html`<polygon class="ov-student" points="${pts(p.student_number.outline)}"></polygon>` : ''}
${areas}</svg>`;
}

export function studentReviewView(d: RecognitionStudentReview, csrf: string, error?: string, msg?: string): Html {
  const { uuid, index, item, pages, removed, current, revision } = d;
  const located = pages.filter((p) => p.located);
  const editable = pages.length > 0;
  return html`<p><a href="${runUrl(uuid)}">← Recognition run</a></p>
${notice(msg)}<h1>Student ${index} <span class="muted">of run <code>${uuid}</code></span></h1>
${error ? html`<div class="flash bad" role="alert" id="review-error">${error}</div>` : ''}
<div class="card"><dl>
<dt>Why</dt><dd>${item ? item.reasons.map((r) => html`<span class="detail">${r}</span><br>`) : html`<span class="muted">nothing: the recognizer was sure</span>`}</dd>
<dt>Now</dt><dd id="review-now">revision ${revision}: ${current.error_code ? html`<span class="pill off">error ${current.error_code}</span> ${current.detail ?? ''}` : html`<span class="pill on">read</span> student <strong class="student-id">${current.result?.student_id ?? ''}</strong>`}
${
  current.result
    ? html`<br>fills ${current.result.fills.map((f, c) => html`<span class="chapter">${c + 1}: ${f.length ? f.join(', ') : '—'}</span> `)}
${(current.result.uncertain ?? []).some((u) => u.length) ? html`<br><span class="err">uncertain ${current.result.uncertain!.map((u, c) => (u.length ? `${c + 1}: ${u.join(', ')} ` : ''))}</span>` : ''}`
    : ''
}</dd>
${removed.length ? html`<dt>Not a card</dt><dd>page ${removed.join(', ')}</dd>` : ''}
</dl>
<p class="muted legend"><span class="key filled">filled</span> <span class="key uncertain">uncertain (score)</span> <span class="key empty">empty</span> <span class="key student">student number</span> <span class="key qr">QR code</span></p></div>
${
  editable
    ? html`<form method="post" action="${studentUrl(uuid, index)}/correct" id="review-form" data-confirm="${`Send the corrected result of student ${index} to the task's callback URL as revision ${revision + 1}? The application gets it as a new callback; sheets marked as not a card are left out of this student's result.`}" data-confirm-yes="Send the correction">
${csrfField(csrf)}<input type="hidden" name="revision" value="${revision}">
<input type="hidden" name="shown" value="${located.flatMap((p) => p.areas.map((a) => `${a.chapter}.${a.index}`)).join(',')}">
<div class="card"><p>Tick the areas that are filled, untick the empty ones (saving decides every area shown: an uncertain area left unticked becomes empty).</p>
<label>Student number <input id="review-student-id" type="text" name="student_id" maxlength="32" value="${current.result?.student_id ?? ''}" placeholder="type the student number" autocomplete="off"></label>
<label>Your name <input id="review-reviewer" type="text" name="reviewer" maxlength="80" placeholder="kept in the audit trail" autocomplete="name"></label>
<button id="review-save" type="submit">Save and send the correction</button></div>
${pages.map(
  (
    p,
  ) => html`<div class="card review-page" data-page="${p.page_number}"><h2>Page ${p.page_number} <a class="annotated-link muted" href="${runUrl(uuid)}/pages/${p.page_number}/annotated">annotated image</a></h2>
<label class="not-a-card"><input type="checkbox" name="nac_${p.page_number}" value="1"> This sheet is not a card (leave page ${p.page_number} out of the student's result)</label>
${pageSvg(uuid, p, true)}</div>`,
)}
</form>`
    : html`<p class="muted">Every sheet of this student was marked as not a card.</p>`
}
${trail(d.item?.corrections ?? [])}`;
}

function trail(c: api.ReviewItem['corrections']): Html {
  return html`<div class="card" id="review-trail"><h2>Corrections</h2>
${
  c.length === 0
    ? html`<p class="muted">None yet.</p>`
    : html`<table><thead><tr><th>Revision</th><th>When</th><th>Who</th><th>Callback</th></tr></thead><tbody>
${c.map(
  (
    x,
  ) => html`<tr class="correction"><td>${x.revision}</td><td>${when(x.created_at)}</td><td>${x.reviewer ?? ''} <span class="muted">(key <code>${x.key_id}</code>, ${x.via})</span></td>
<td><code>${x.callback_id}</code> ${x.callback_status ? html`<span class="pill ${x.callback_status === 'delivered' ? 'on' : x.callback_status === 'failed' ? 'off' : 'wait'}">${x.callback_status}</span>` : ''}</td></tr>`,
)}
</tbody></table>`
}</div>`;
}

/** The confirmation page of a correction sent without script: the same fields, confirmed. */
export function confirmCorrectionView(
  action: string,
  back: string,
  fields: Record<string, string | undefined>,
  ask: string,
): Html {
  return html`<div class="card confirm" id="confirm"><h1>Are you sure?</h1>
<p id="confirm-ask">${ask}</p>
<form method="post" action="${action}">${Object.entries(fields)
    .filter(([k]) => k !== '_confirmed')
    .map(
      ([k, v]) => html`<input type="hidden" name="${k}" value="${v ?? ''}">`,
    )}<input type="hidden" name="_confirmed" value="1">
<button id="confirm-yes" class="danger" type="submit">Send the correction</button> <a id="confirm-no" class="cancel" href="${back}">Cancel</a></form></div>`;
}
