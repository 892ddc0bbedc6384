// The console's pages as functions of the data the services return (the same the API returns).
import type { api, PrinterCapability } from '@boxhub/protocol';
import type { InkjetAvailability, InkjetOp } from '../control/service.ts';
import { html, when, type Html } from './html.ts';
import { printForm, type PrintChoice } from './print-views.ts';
import { dangers } from './dangers.ts';
import { csrfField, dangerForm, notice, pager } from './widgets.ts';

const online = (c: api.Client) =>
  c.online ? html`<span class="pill on">online</span>` : html`<span class="pill off">offline</span>`;
const devUrl = (uuid: string) => `/console/devices/${encodeURIComponent(uuid)}`;

export function loginView(csrf: string, error?: string): Html {
  return html`<div class="card login"><h1>Sign in</h1>
<p class="muted">Sign in with your application's API key. The key is checked once; the console then keeps a session that ends when the key is revoked or rotated.</p>
${error ? html`<div class="flash bad" role="alert">${error}</div>` : ''}
<form method="post" action="/console/login">${csrfField(csrf)}
<label for="api_key">API key</label><input id="api_key" type="password" name="api_key" autocomplete="off" required>
<button type="submit">Sign in</button></form></div>`;
}

function printerState(c: api.Client): Html {
  const p = c.printer;
  if (!p) return html`<span class="muted">unknown</span>`;
  if (!p.connected) return html`<span class="pill off">not connected</span>`;
  return html`<span class="pill ${p.error_code ? 'off' : 'on'}">${p.error_code ? `error ${p.error_code}` : 'ready'}</span> ${p.make ?? ''} ${p.model ?? ''}${reasons(p.state_reasons, 'printer-reasons')}`;
}

/** Normalised state reasons (docs/printers-and-scanners.md "Normalised state reasons"). */
const reasons = (r: readonly string[] | undefined, id: string) =>
  r && r.length > 0 ? html` <span id="${id}" class="err">${r.map((x) => x.replace(/_/g, ' ')).join(', ')}</span>` : '';

function scannerState(c: api.Client): Html {
  const s = c.scanner;
  if (!s) return html`<span class="muted">unknown</span>`;
  return s.connected
    ? html`<span class="pill ${s.state_reasons?.length ? 'off' : 'on'}">connected</span> ${s.make ?? ''} ${s.model ?? ''}${reasons(s.state_reasons, 'scanner-reasons')}`
    : html`<span class="pill off">not connected</span>`;
}

const lastSeen = (c: api.Client) =>
  c.online ? `since ${when(c.last_connect_at)}` : when(c.last_disconnect_at ?? c.last_connect_at);

export function devicesView(
  list: { page: number; page_size: number; total: number; clients: api.Client[] },
  csrf: string,
  msg?: string,
): Html {
  const pages = Math.max(1, Math.ceil(list.total / list.page_size));
  return html`${notice(msg)}<h1>Devices <span class="muted">(${list.total})</span></h1>
<table id="devices"><thead><tr><th>Name</th><th>State</th><th>Last seen</th><th>Printer</th><th>Scanner</th><th>Code</th></tr></thead><tbody>
${list.clients.map(
  (
    c,
  ) => html`<tr data-uuid="${c.uuid}"><td><a class="device-name" href="${devUrl(c.uuid ?? '')}">${c.name ?? c.uuid}</a></td>
<td class="state">${online(c)}</td><td>${lastSeen(c)}</td><td>${printerState(c)}</td><td>${scannerState(c)}</td><td><code>${c.code}</code></td></tr>`,
)}
</tbody></table>
${list.clients.length === 0 ? html`<p class="muted">No device is bound to this application yet.</p>` : ''}
<div class="card mt"><h2>Bind a box</h2>
<form method="post" action="/console/devices/bind">${csrfField(csrf)}
<input id="bind-code" type="text" name="code" placeholder="device code from the label" maxlength="64" required aria-label="device code">
<input id="bind-name" type="text" name="name" placeholder="name" maxlength="100" required aria-label="name">
<button id="bind" type="submit">Bind</button></form></div>
${pages > 1 ? html`<p>Page ${list.page} of ${pages}. ${list.page > 1 ? html`<a href="/console/devices?page=${list.page - 1}">Previous</a>` : ''} ${list.page < pages ? html`<a href="/console/devices?page=${list.page + 1}">Next</a>` : ''}</p>` : ''}`;
}

/** A JSON value as a nested list (the printer capability tree). */
export function tree(v: unknown): Html {
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x !== 'object' || x === null)) return html`${v.map(String).join(', ')}`;
    return html`<ul class="tree">${v.map((x) => html`<li>${tree(x)}</li>`)}</ul>`;
  }
  if (typeof v === 'object' && v !== null) {
    return html`<ul class="tree">${Object.entries(v).map(([k, x]) => html`<li><b>${k}</b>: ${tree(x)}</li>`)}</ul>`;
  }
  return html`${String(v)}`;
}

export interface RecentTask {
  uuid: string;
  kind: string;
  state: string;
  created_at: number;
  finished_at: number | null;
  error_code: number;
}

export interface DeviceViewData {
  client: api.Client;
  tasks: RecentTask[];
  capability?: PrinterCapability;
  capabilityError?: string;
  inkjet: InkjetAvailability;
  current?: string;
  csrf: string;
  msg?: string;
  /** A refusal of the form just sent (the service's message), shown above the page. */
  error?: string;
  /** The print form as it was sent, when it was refused. */
  chosen?: PrintChoice;
}

const INKJET: Record<InkjetOp, { id: string; label: string; note: string }> = {
  head_clean: {
    id: 'head-clean',
    label: 'Clean the print head',
    note: 'print a nozzle check page afterwards to verify',
  },
  nozzle_check: { id: 'nozzle-check', label: 'Print a nozzle check', note: 'load plain A4 paper first' },
  power_ink_flush: {
    id: 'power-ink-flush',
    label: 'Power ink flush',
    note: 'for severe clogging that cleaning did not clear; uses a lot of ink; once per 24 hours',
  },
};

function inkjetControls(c: api.Client, csrf: string, a: InkjetAvailability): Html {
  if (!a.ops.length) return html`<p class="muted" id="inkjet-unavailable">Not available: ${a.why ?? ''}.</p>`;
  const button = (op: InkjetOp) => {
    const danger = dangers.inkjet(c, op);
    return danger
      ? dangerForm(danger, csrf)
      : html`<form method="post" action="${devUrl(c.uuid ?? '')}/inkjet/${op}" class="inline">${csrfField(csrf)}<button id="${INKJET[op].id}" class="secondary" type="submit">${INKJET[op].label}</button></form>`;
  };
  return html`<ul class="controls" id="inkjet">${a.ops.map((op) => html`<li>${button(op)} <span class="muted">${INKJET[op].note}</span></li>`)}</ul>
${a.flushNextAt ? html`<p class="muted" id="flush-next">The next power ink flush is allowed after ${when(a.flushNextAt)}.</p>` : ''}`;
}

export function deviceView(d: DeviceViewData): Html {
  const c = d.client;
  const u = devUrl(c.uuid ?? '');
  return html`<p><a href="/console/devices">← Devices</a></p>${notice(d.msg)}${d.error ? html`<div class="flash bad" role="alert" id="refused">${d.error}</div>` : ''}
<h1 id="device-title">${c.name ?? c.uuid} ${online(c)}</h1>
<div class="grid">
<div class="card"><h2>Device</h2><dl>
<dt>UUID</dt><dd><code>${c.uuid}</code></dd><dt>Code</dt><dd><code>${c.code}</code></dd>
<dt>Remark</dt><dd>${c.remark ?? '—'}</dd><dt>Model</dt><dd>${c.model ?? '—'}</dd>
<dt>Bound</dt><dd>${when(c.active_at)}</dd><dt>Last connect</dt><dd>${when(c.last_connect_at)}</dd><dt>Last disconnect</dt><dd>${when(c.last_disconnect_at)}</dd>
<dt>Version</dt><dd>${c.version ?? '—'} ${c.firmware ? `(firmware ${c.firmware})` : ''}</dd>
<dt>Network</dt><dd>${c.local_ip ?? '—'} ${c.mac ? `· ${c.mac}` : ''}</dd>
<dt>Printer</dt><dd>${printerState(c)}</dd><dt>Scanner</dt><dd>${scannerState(c)}</dd>
</dl></div>
<div class="card"><h2>Control</h2>
<form method="post" action="${u}/buzz" class="inline">${csrfField(d.csrf)}<button id="buzz" type="submit">Buzz</button></form>
${dangerForm(dangers.reboot(c), d.csrf)}
${dangerForm(dangers.unbind(c), d.csrf)}
<h2>Inkjet maintenance</h2>
${inkjetControls(c, d.csrf, d.inkjet)}
<h2>Rename</h2>
<form method="post" action="${u}/rename">${csrfField(d.csrf)}
<input type="text" name="name" value="${c.name ?? ''}" maxlength="100" required aria-label="name">
<input type="text" name="remark" value="${c.remark ?? ''}" maxlength="500" placeholder="remark" aria-label="remark">
<button id="rename" type="submit">Save</button></form></div>
<div class="card"><h2>Scan</h2>
${d.current ? html`<p>A scan is in progress: <a href="${u}/scans/${d.current}">open it</a>.</p>` : ''}
<form method="post" action="${u}/scan">${csrfField(d.csrf)}
<input id="scan-callback" type="text" name="callback_url" placeholder="callback URL (optional)" aria-label="scan callback URL">
<label><input id="scan-continuous" type="checkbox" name="continuous" value="1"> continuous (wait for more paper until stopped)</label> <button id="start-scan" type="submit">Start a scan</button></form>
<p class="muted">Load paper in the box's feeder; each item appears on the task page as it arrives.</p></div>
<div class="card"><h2>Print</h2>
${printForm({ url: u, csrf: d.csrf, ...(d.capability ? { capability: d.capability } : {}), ...(d.chosen ? { chosen: d.chosen } : {}) })}
<p class="muted">A PDF or a JPG; the options offered are the printer's, for the chosen media size and type.</p>
${dangerForm(dangers.cancelPrints(c), d.csrf)}</div>
</div>
<div class="card"><h2>Recent tasks</h2>${
    d.tasks.length === 0
      ? html`<p class="muted">No scan or print task yet (tasks are kept until they expire).</p>`
      : html`
<table id="tasks"><thead><tr><th>Task</th><th>Kind</th><th>State</th><th>Created</th><th>Finished</th><th>Error</th></tr></thead><tbody>
${d.tasks.map((t) => html`<tr><td><a href="${u}/${t.kind === 'scan' ? 'scans' : 'prints'}/${t.uuid}"><code>${t.uuid}</code></a></td><td>${t.kind}</td><td>${t.state}</td><td>${when(Number(t.created_at))}</td><td>${when(t.finished_at === null ? null : Number(t.finished_at))}</td><td>${Number(t.error_code) || ''}</td></tr>`)}
</tbody></table>`
  }</div>
<div class="card"><h2>Printer capability</h2>${d.capabilityError ? html`<p class="muted">${d.capabilityError}</p>` : html`<div id="capability">${tree(d.capability)}</div>`}</div>`;
}

const step = (done: boolean, label: string, at?: number) =>
  html`<li class="${done ? 'done' : 'todo'}">${label}${done && at ? html` <span class="muted">${when(at)}</span>` : ''}</li>`;

export function scanTaskView(device: api.Client, scanUuid: string, live: Html, csrf: string): Html {
  const u = devUrl(device.uuid ?? '');
  return html`<p><a href="${u}">← ${device.name ?? device.uuid}</a></p>
<h1>Scan task <code>${scanUuid}</code></h1>
<p>${dangerForm(dangers.stopScan(device, scanUuid), csrf)}</p>
${live}`;
}

/**
 * A scan's progress page by page (docs/scanning.md, "Progress"): a cell a page as the box scans
 * it (several pages a cell past 40), filled once its item is recorded, hatched while its item is
 * still being made. The length of the stack is unknown (a feeder does not say), so it grows.
 */
function pageBar(info: api.ScanInfo): Html {
  const scanned = info.scanned_pages ?? info.total_pages;
  const per = Math.max(1, Math.ceil(scanned / 40));
  const recorded = Math.floor(Math.min(info.total_pages, scanned) / per);
  const cells = Math.ceil(scanned / per);
  const skipped = info.skipped_pages ? ` · ${info.skipped_pages} blank skipped` : '';
  return html`<div id="scan-progress" class="pagebar" role="progressbar" aria-valuenow="${scanned}" aria-label="pages scanned">${Array.from({ length: cells }, (_, i) => html`<span class="${i < recorded ? 'cell rec' : 'cell open'}"></span>`)}</div>
<p class="muted" id="scan-pages">${scanned} pages scanned${skipped} · ${info.total_pages} in recorded items${per > 1 ? ` · a cell is ${per} pages` : ''}${info.last_page_at ? ` · last page ${when(info.last_page_at)}` : ''}</p>`;
}

/**
 * The live part of a scan task page: it polls itself (the same page of items) until the task has
 * finished. `pageUrl` is the task page, for the links to other pages of items.
 */
export function scanLive(
  url: string,
  pageUrl: string,
  info: api.ScanInfo,
  items: api.ItemData,
  history: Html | string = '',
): Html {
  const poll = info.finished
    ? html``
    : html` hx-get="${url}?page=${items.page}" hx-trigger="every 1s" hx-swap="outerHTML"`;
  return html`<div id="scan-live"${poll}>
<div class="card"><ol class="timeline">${step(info.action_ack, 'Box acknowledged', info.action_ack_at)}${step(info.finished, 'Finished', info.finished_at)}</ol>
<p>Status: <span id="scan-status" class="pill ${info.finished ? (info.error_code ? 'off' : 'on') : 'wait'}">${info.finished ? (info.error_code ? `finished with error ${info.error_code}` : 'finished') : 'scanning'}</span>
· ${info.item_size} items · ${info.total_pages} pages${info.total_file_size !== undefined ? ` · ${info.total_file_size} KB` : ''}</p>
${pageBar(info)}</div>
<table id="scan-items"><thead><tr><th>Item</th><th>Pages</th><th>Size</th><th>Scanned</th><th>MD5</th><th>File</th></tr></thead><tbody>
${items.items.map(
  (
    i,
  ) => html`<tr class="scan-item"><td>${i.item_id}</td><td>${i.pages}</td><td>${i.file_size !== undefined ? `${i.file_size} KB` : '—'}</td><td>${when(i.scanned_at)}</td><td><code>${i.check_sum ?? ''}</code></td>
<td>${i.temp_download_url ? html`<a class="download" href="${i.temp_download_url}">download PDF</a>` : html`<span class="muted">sent directly</span>`}</td></tr>`,
)}
</tbody></table>${items.total > items.page_size && items.items.length > 0 ? html`<p class="muted">Items ${(items.page - 1) * items.page_size + 1}-${(items.page - 1) * items.page_size + items.items.length} of ${items.total}.</p>` : ''}
${pager(pageUrl, items, {}, 'items-pager')}${history}</div>`;
}

export function printTaskView(device: api.Client, printUuid: string, live: Html, job: Html): Html {
  return html`<p><a href="${devUrl(device.uuid ?? '')}">← ${device.name ?? device.uuid}</a></p>
<h1>Print task <code>${printUuid}</code></h1>${live}${job}`;
}

export function printLive(url: string, info: api.PrintInfo, history: Html | string = ''): Html {
  const poll = info.finished ? html`` : html` hx-get="${url}" hx-trigger="every 1s" hx-swap="outerHTML"`;
  return html`<div id="print-live"${poll}><div class="card">
<ol class="timeline">${step(true, 'Created', info.created_at)}${step(info.action_ack, 'Box acknowledged', info.action_ack_at)}${step(info.started, 'Printing started', info.started_at)}${step(info.finished, 'Finished', info.finished_at)}</ol>
<p>Status: <span id="print-status" class="pill ${info.finished ? (info.error_code ? 'off' : 'on') : 'wait'}">${info.finished ? (info.error_code ? `failed: error ${info.error_code}` : 'finished') : info.started ? 'printing' : 'waiting'}</span></p>
<dl><dt>Pages</dt><dd>${info.pages ?? '—'}${info.printed_pages !== undefined ? ` (printer counted ${info.printed_pages})` : ''}</dd>
<dt>File</dt><dd>${info.file_size !== undefined ? `${info.file_size} KB` : '—'}${info.download_spent !== undefined ? `, downloaded in ${info.download_spent} s` : ''}</dd>
<dt>Error code</dt><dd>${info.error_code}</dd><dt>Expires</dt><dd>${when(info.expires_at * 1000)}</dd></dl></div>${history}</div>`;
}

export function callbacksView(list: api.CallbackList, csrf: string, msg?: string): Html {
  const pages = Math.max(1, Math.ceil(list.total / list.page_size));
  return html`${notice(msg)}<h1>Callbacks <span class="muted">(${list.total})</span></h1>
<p><a id="callback-settings" href="/console/callbacks/settings">Send a test callback or rotate the secret</a></p>
<table id="callbacks"><thead><tr><th>Event</th><th>URL</th><th>Task</th><th>Status</th><th>Attempts (status · latency · error)</th><th></th></tr></thead><tbody>
${list.callbacks.map(
  (
    c,
  ) => html`<tr class="callback" data-id="${c.id}"><td>${c.event}<br><span class="muted">${when(c.created_at)}</span></td><td><code>${c.method} ${c.url}</code></td><td><code>${c.task_uuid ?? ''}</code></td>
<td><span class="pill ${c.status === 'delivered' ? 'on' : c.status === 'failed' ? 'off' : 'wait'}">${c.status}</span></td>
<td><ol class="attempts">${c.attempts.map((a) => html`<li>${when(a.at)} · ${a.status_code ?? 'no answer'} · ${a.latency_ms} ms${a.error ? html` · <span class="err">${a.error}</span>` : ''}</li>`)}</ol></td>
<td>${c.status === 'delivered' || c.status === 'failed' ? html`<form method="post" action="/console/callbacks/${encodeURIComponent(c.id)}/replay">${csrfField(csrf)}<button class="replay" type="submit">Replay</button></form>` : ''}</td></tr>`,
)}
</tbody></table>
${pages > 1 ? html`<p>Page ${list.page} of ${pages}. ${list.page > 1 ? html`<a href="/console/callbacks?page=${list.page - 1}">Previous</a>` : ''} ${list.page < pages ? html`<a href="/console/callbacks?page=${list.page + 1}">Next</a>` : ''}</p>` : ''}`;
}

export function errorView(status: number, message: string, home: string): Html {
  return html`<div class="card"><h1>${status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Something went wrong'}</h1><p class="err" id="error">${message}</p>
<p><a href="${home}">Back</a></p></div>`;
}

export function callbackSettingsView(csrf: string, rotated?: api.RotateSecretResult): Html {
  return html`<h1>Callback settings</h1>
${
  rotated
    ? html`<div class="card" id="new-secret"><h2>New callback secret</h2>
<p>Shown this once. Callbacks are signed with it from now on; the previous secret also signs until ${when(rotated.previous_secret_expires_at)}.</p>
<p><code id="callback-secret">${rotated.callback_secret}</code></p></div>`
    : ''
}
<div class="grid">
<div class="card"><h2>Send a test callback</h2>
<form method="post" action="/console/callbacks/test">${csrfField(csrf)}
<input id="test-url" type="text" name="callback_url" placeholder="https://your.app/hooks/boxhub" required aria-label="callback URL">
<button id="send-test" type="submit">Send</button></form>
<p class="muted">A <code>callback.test</code> event, signed and retried like any other; it appears in the callback log.</p></div>
<div class="card"><h2>Rotate the callback secret</h2>
<p>${dangerForm(dangers.rotateCallbackSecret('rotate-secret', '/console/callbacks/settings'), csrf)}</p>
<p class="muted">The new <code>whsec_</code> secret is shown once, on the next page.</p></div>
</div>`;
}
