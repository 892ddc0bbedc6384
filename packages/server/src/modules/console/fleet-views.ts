// The operator's fleet pages (docs/console.md "Fleet"): the fleet at a glance (boxes by state,
// agent version, label), a box's recent history, rollouts wave by wave with the form that
// starts one.
import type { api } from '@boxhub/protocol';
import type { FleetBox } from '../fleet/service.ts';
import { html, when, type Html } from './html.ts';
import { csrfField } from './widgets.ts';

const enc = encodeURIComponent;
const FLEET = '/console/operator/fleet';
const ROLLOUTS = '/console/operator/rollouts';

export function fleetView(s: api.FleetSummary, boxes: readonly FleetBox[], label: string | undefined): Html {
  return html`<h1>Fleet${label ? html` <span class="muted">label</span> <code id="fleet-label">${label}</code>` : ''}</h1>
<div class="card" id="fleet-summary"><dl>
<dt>Boxes</dt><dd id="fleet-total">${s.total}</dd>
<dt>Online</dt><dd id="fleet-online">${s.online}</dd>
<dt>Offline</dt><dd id="fleet-offline">${s.offline}</dd>
<dt>Printer in trouble</dt><dd id="fleet-printer-trouble">${s.printer_trouble}</dd>
<dt>Scanner in trouble</dt><dd id="fleet-scanner-trouble">${s.scanner_trouble}</dd></dl></div>
<div class="card"><h2>By agent version</h2><table id="fleet-versions"><thead><tr><th>Version</th><th>Boxes</th></tr></thead><tbody>
${s.versions.map((v) => html`<tr class="version" data-version="${v.version}"><td><code>${v.version}</code></td><td>${v.boxes}</td></tr>`)}
</tbody></table></div>
<div class="card"><h2>By label</h2><table id="fleet-labels"><thead><tr><th>Label</th><th>Boxes</th><th>Online</th></tr></thead><tbody>
${s.labels.map((l) => html`<tr class="label" data-label="${l.label}"><td><a href="${FLEET}?label=${enc(l.label)}">${l.label}</a></td><td>${l.boxes}</td><td>${l.online}</td></tr>`)}
</tbody></table>${label ? html`<p><a href="${FLEET}">Every box</a></p>` : ''}</div>
<table id="fleet-boxes"><thead><tr><th>Code</th><th>State</th><th>Version</th><th>Printer</th><th>Scanner</th><th>Labels</th></tr></thead><tbody>
${boxes.map(
  (
    b,
  ) => html`<tr class="box" data-uuid="${b.uuid}"><td><a href="${FLEET}/${enc(b.uuid)}"><code>${b.code}</code></a></td>
<td>${b.online ? html`<span class="pill on">online</span>` : html`<span class="pill off">offline</span>${b.offline_since ? html` <span class="muted">since ${when(b.offline_since)}</span>` : ''}`}</td>
<td><code>${b.version ?? '—'}</code></td><td>${b.printer_trouble ? html`<span class="pill off">${b.printer_trouble}</span>` : ''}</td>
<td>${b.scanner_trouble ? html`<span class="pill off">${b.scanner_trouble}</span>` : ''}</td><td>${b.labels.join(' ')}</td></tr>`,
)}
</tbody></table>`;
}

export function boxHistoryView(b: FleetBox, history: readonly api.DeviceHistoryEntry[]): Html {
  return html`<p><a href="${FLEET}">← Fleet</a></p><h1>Box <code id="box-code">${b.code}</code></h1>
<div class="card"><dl><dt>UUID</dt><dd><code>${b.uuid}</code></dd><dt>State</dt><dd>${b.online ? 'online' : `offline${b.offline_since ? ` since ${when(b.offline_since)}` : ''}`}</dd>
<dt>Agent version</dt><dd><code>${b.version ?? '—'}</code></dd><dt>Labels</dt><dd>${b.labels.join(' ') || '—'}</dd></dl></div>
<h2>Recent history</h2><table id="box-history"><thead><tr><th>When</th><th>What</th><th>Detail</th></tr></thead><tbody>
${history.map((h) => html`<tr class="entry ${h.what}"><td>${when(h.at)}</td><td>${h.what}</td><td>${h.detail ?? ''}</td></tr>`)}
</tbody></table>`;
}

function wavesTable(r: api.RolloutView): Html {
  return html`<table class="waves"><thead><tr><th>Wave</th><th>Boxes</th><th>Updated</th><th>Failed</th><th>Installing</th><th>Pending</th></tr></thead><tbody>
${r.waves.map(
  (
    w,
  ) => html`<tr class="wave${w.wave === r.wave && r.state === 'running' ? ' current' : ''}" data-wave="${w.wave + 1}"><td>${w.wave + 1}</td><td>${w.boxes}</td>
<td class="updated">${w.updated}</td><td class="failed">${w.failed}</td><td class="sent">${w.sent}</td><td class="pending">${w.pending}</td></tr>`,
)}
</tbody></table>`;
}

export function rolloutsView(
  rollouts: readonly api.RolloutView[],
  releases: readonly api.ReleaseView[],
  labels: readonly string[],
  csrf: string,
): Html {
  return html`<h1>Rollouts</h1>
<table id="rollouts"><thead><tr><th>Release</th><th>State</th><th>Wave</th><th>Updated</th><th>Failed</th><th>Started</th></tr></thead><tbody>
${rollouts.map(
  (
    r,
  ) => html`<tr class="rollout" data-id="${r.id}"><td><a href="${ROLLOUTS}/${enc(r.id)}"><code>${r.version}</code></a></td><td class="state">${r.state}</td>
<td>${r.wave + 1} of ${r.waves.length}</td><td>${r.waves.reduce((n, w) => n + w.updated, 0)}</td><td>${r.waves.reduce((n, w) => n + w.failed, 0)}</td><td>${when(r.created_at)}</td></tr>`,
)}
</tbody></table>
<div class="card mt"><h2>Roll a release out</h2>
${
  releases.length
    ? html`<form method="post" action="${ROLLOUTS}/create" id="rollout-form">${csrfField(csrf)}
<label for="rollout-release">Release</label><select id="rollout-release" name="release_id">${releases.map((r) => html`<option value="${r.id}">${r.version} (${r.platform})</option>`)}</select>
<label for="rollout-label">Boxes with the label</label><select id="rollout-label" name="label"><option value="">— every box (percentage below) —</option>${labels.map((l) => html`<option value="${l}">${l}</option>`)}</select>
<label for="rollout-percent">or this share of the fleet, %</label><input id="rollout-percent" type="number" name="percent" min="1" max="100" value="100">
<label for="rollout-waves">Waves</label><input id="rollout-waves" type="number" name="waves" min="1" max="100" value="3">
<label for="rollout-pause">Pause between waves, s</label><input id="rollout-pause" type="number" name="wave_pause_s" min="0" value="600">
<label for="rollout-max-failed">Stop when more than this share of a wave fails, %</label><input id="rollout-max-failed" type="number" name="max_failed_pct" min="0" max="100" value="10">
<button id="create-rollout" type="submit">Start the rollout</button></form>`
    : html`<p class="muted" id="no-release">No release yet: sign and upload one with <code>boxhub release sign</code> and <code>boxhub release upload</code> (docs/updates.md).</p>`
}
<p class="muted">As <code>POST /api/operator/rollout/create</code>.</p></div>
<div class="card"><h2>Releases</h2><table id="releases"><thead><tr><th>Version</th><th>Platform</th><th>Size</th><th>SHA-256</th><th>Uploaded</th></tr></thead><tbody>
${releases.map((r) => html`<tr class="release"><td><code>${r.version}</code></td><td>${r.platform}</td><td>${r.size}</td><td><code>${r.sha256.slice(0, 16)}…</code></td><td>${when(r.created_at)}</td></tr>`)}
</tbody></table></div>`;
}

export function rolloutView(r: api.RolloutView, csrf: string): Html {
  return html`<p><a href="${ROLLOUTS}">← Rollouts</a></p><h1>Rollout of <code>${r.version}</code></h1>
<div class="card"><dl><dt>State</dt><dd id="rollout-state">${r.state}</dd>${r.reason ? html`<dt>Why</dt><dd id="rollout-reason">${r.reason}</dd>` : ''}
<dt>Started</dt><dd>${when(r.created_at)}</dd>${r.ended_at ? html`<dt>Ended</dt><dd>${when(r.ended_at)}</dd>` : ''}</dl></div>
<div id="rollout-waves">${wavesTable(r)}</div>
${r.state === 'running' ? html`<form method="post" action="${ROLLOUTS}/${enc(r.id)}/cancel" class="mt">${csrfField(csrf)}<button id="cancel-rollout" class="secondary" type="submit">Cancel the rollout</button></form>` : ''}`;
}
