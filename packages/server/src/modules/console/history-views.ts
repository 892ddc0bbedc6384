// A task's history on its console page (docs/console.md "Pages"; docs/tasks.md "History"), and
// the device events setting on the callback settings page (docs/callbacks.md "Device events").
import type { api } from '@boxhub/protocol';
import { html, when, type Html } from './html.ts';
import { csrfField } from './widgets.ts';

/** The detail of an entry as short `key value` pairs (reasons joined). */
function detailText(d: Record<string, unknown> | undefined): string {
  if (!d) return '';
  return Object.entries(d)
    .map(
      ([k, v]) =>
        `${k} ${Array.isArray(v) ? (v.length ? v.join(', ') : '—') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`,
    )
    .join(' · ');
}

export function historyView(h: api.TaskHistory): Html {
  return html`<div class="card" id="history"><h2>History</h2>
<table id="history-entries"><thead><tr><th>When</th><th>Who</th><th>What</th><th>Details</th></tr></thead><tbody>
${h.entries.map((e) => html`<tr class="history-entry" data-what="${e.what}" data-source="${e.source}"><td>${when(e.at)}</td><td>${e.source}</td><td>${e.what.replace(/_/g, ' ')}</td><td class="muted">${detailText(e.detail)}</td></tr>`)}
</tbody></table>
<p class="muted">What happened and who said so; kept until the task expires (<code>GET /api/task/history</code>).</p></div>`;
}

export function deviceEventsCard(setting: api.DeviceCallbackSetting, csrf: string): Html {
  return html`<div class="card" id="device-events"><h2>Device events</h2>
<p>${setting.callback_url ? html`Sent to <code id="device-events-url">${setting.callback_url}</code>.` : html`<span id="device-events-url" class="muted">Not sent.</span>`}
A box going offline or online, and a printer's or scanner's change of state (out of paper, jammed, cover open, …), reported once it has held ${Math.round(setting.settle_ms / 1000)} s.</p>
<form method="post" action="/console/callbacks/device_events">${csrfField(csrf)}
<input id="device-events-input" type="text" name="callback_url" value="${setting.callback_url ?? ''}" placeholder="https://your.app/hooks/devices (empty: stop)" aria-label="device events URL">
<button id="device-events-save" type="submit">Save</button></form></div>`;
}
