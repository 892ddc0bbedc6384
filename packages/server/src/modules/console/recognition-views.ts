// Recognition runs (feedback cards): the application's recognition tasks, a form that starts one
// on a box, and each run with every student's result as its callback carried it.
import type { api } from '@boxhub/protocol';
import type { RecognitionRun, RecognitionRunSummary, RecognitionStudent } from '../recognition/service.ts';
import { html, when, type Html } from './html.ts';
import { csrfField, notice, pager, taskState } from './widgets.ts';

const enc = encodeURIComponent;
const runUrl = (uuid: string) => `/console/recognition/${enc(uuid)}`;

export interface RecognitionListData {
  list: { page: number; page_size: number; total: number; runs: RecognitionRunSummary[] };
  devices: api.Client[];
  templates: number;
  ess: boolean;
  csrf: string;
  msg?: string;
}

export function recognitionListView(d: RecognitionListData): Html {
  return html`${notice(d.msg)}<h1>Recognition runs <span class="muted">(${d.list.total})</span></h1>
<div class="card"><h2>Start a run</h2>
${!d.ess ? html`<p class="err" id="no-ess">This application may not use feedback-card recognition; the operator grants it (ess).</p>` : ''}
${d.templates === 0 ? html`<p class="muted">No card template yet: <a href="/console/templates">create one</a> first; only this application's templates are recognized.</p>` : html`<p class="muted">${d.templates} card template(s) of this application are recognized.</p>`}
<form method="post" action="/console/recognition/start">${csrfField(d.csrf)}
<select id="run-device" name="device" required aria-label="device">${d.devices.length === 0 ? html`<option value="">no device is bound to this application</option>` : d.devices.map((c) => html`<option value="${c.uuid}">${c.name ?? c.uuid}${c.online ? '' : ' (offline)'}</option>`)}</select>
<input id="run-callback" type="text" name="callback_url" placeholder="callback URL for the results" maxlength="200" required aria-label="results callback URL">
<label><input id="run-simplex" type="checkbox" name="simplex" value="1"> one side only</label>
<button id="start-run" type="submit">Scan and recognize</button></form>
<p class="muted">Creates a recognition task (as <code>POST /api/application/ess/create</code>) and a scan on the box that sends its pages to it (direct transfer, 200 dpi); each student's result is POSTed to the callback URL and listed on the run's page.</p></div>
<table id="runs"><thead><tr><th>Task</th><th>State</th><th>Created</th><th>Finished</th><th>Pages received</th><th>Students</th><th>Scan</th></tr></thead><tbody>
${d.list.runs.map(
  (
    r,
  ) => html`<tr class="run" data-uuid="${r.uuid}"><td><a href="${runUrl(r.uuid)}"><code>${r.uuid}</code></a></td><td>${runState(r)}</td><td>${when(r.created_at)}</td><td>${when(r.finished_at)}</td>
<td>${r.pages_received}</td><td>${r.students_sent}</td><td>${r.scan_uuid ? html`<code>${r.scan_uuid}</code>` : html`<span class="muted">no scan yet</span>`}</td></tr>`,
)}
</tbody></table>
${d.list.runs.length === 0 ? html`<p class="muted">No recognition task yet (tasks are kept until they expire).</p>` : ''}
${pager('/console/recognition', d.list)}`;
}

function runState(r: RecognitionRunSummary): Html {
  if (r.state === 'created') return html`<span class="pill wait">waiting for its scan</span>`;
  if (r.state === 'received') return html`<span class="pill wait">recognizing</span>`;
  return taskState(r.state, 0);
}

export function runView(run: RecognitionRun, live: Html): Html {
  return html`<p><a href="/console/recognition">← Recognition runs</a></p>
<h1>Recognition run <code>${run.uuid}</code></h1>
<div class="card"><dl>
<dt>Created</dt><dd>${when(run.created_at)}</dd><dt>Expires</dt><dd>${when(run.expires_at)}</dd>
<dt>Callback</dt><dd><code>${run.callback_url ?? '—'}</code></dd>
<dt>Scan</dt><dd>${run.scan_uuid ? (run.scan_device ? html`<a href="/console/devices/${enc(run.scan_device)}/scans/${enc(run.scan_uuid)}"><code>${run.scan_uuid}</code></a>` : html`<code>${run.scan_uuid}</code>`) : html`<span class="muted">none yet: give the task's address to one scan create</span>`}</dd>
</dl></div>
${live}`;
}

function fills(f: number[][] | undefined): Html {
  if (!f) return html``;
  return html`<ol class="fills">${f.map((areas) => html`<li>${areas.length ? areas.join(', ') : '—'}</li>`)}</ol>`;
}

function student(s: RecognitionStudent): Html {
  return html`<tr class="student" data-index="${s.index}"><td>${s.index}</td>
<td class="student-id">${s.result ? s.result.student_id : html`<span class="muted">—</span>`}</td>
<td>${s.error_code ? html`<span class="pill off">error ${s.error_code}</span>` : html`<span class="pill on">read</span>`}${s.detail ? html` <span class="err detail">${s.detail}</span>` : ''}</td>
<td>${s.result ? fills(s.result.fills) : ''}</td>
<td>${s.pages.map((p) => html`${p.url ? html`<a class="page-link" href="${p.url}">page ${p.page_number}</a>` : html`page ${p.page_number}`} <span class="muted">(sheet ${p.paper_number}, ${p.front ? 'front' : 'back'}, item ${p.item_id})</span><br>`)}</td>
<td><span class="pill ${s.callback_status === 'delivered' ? 'on' : s.callback_status === 'failed' ? 'off' : 'wait'}">${s.callback_status}</span></td></tr>`;
}

/** The live part of a run's page: it polls itself (the same page of students) until the task has ended. */
export function runLive(url: string, run: RecognitionRun, review: Html = html``): Html {
  const ended = run.state === 'ended';
  const poll = ended
    ? html``
    : html` hx-get="${url}?page=${run.students.page}" hx-trigger="every 1s" hx-swap="outerHTML"`;
  return html`<div id="run-live"${poll}>
<div class="card"><p>Status: <span id="run-status">${runState(run)}</span>
· <span id="run-counts">${run.pages_received} pages received · ${run.pages_read} read · ${run.students.total} students</span>
${run.end_error ? html` · <span class="err">the box ended the scan with error ${run.end_error}</span>` : ''}</p></div>
${review}
<table id="students"><thead><tr><th>#</th><th>Student</th><th>Result</th><th>Fills (per chapter: filled areas)</th><th>Pages</th><th>Callback</th></tr></thead><tbody>
${run.students.rows.map(student)}
</tbody></table>
${run.students.total === 0 ? html`<p class="muted">No student's result yet.</p>` : ''}
${pager(url.replace(/\/live$/, ''), run.students, {}, 'students-pager')}</div>`;
}
