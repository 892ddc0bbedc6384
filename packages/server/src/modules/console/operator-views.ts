// The operator's pages: sign-in with the operator token, the deployment's applications (create,
// keys) and its devices (register, rotate or revoke a box's secret). Secrets made here are shown
// in the answer that made them, once.
import type { ApplicationSummary, CreatedApplication, CreatedKey, KeyView } from '../applications/service.ts';
import type { OperatorDevice, RegisteredDevice } from '../devices/service.ts';
import { html, when, type Html } from './html.ts';
import { apiKeysTable, newKeyCard } from './key-views.ts';
import { dangers } from './dangers.ts';
import { csrfField, dangerForm, notice, pager } from './widgets.ts';

const registeredBox = (d: OperatorDevice) => ({ uuid: d.client.uuid ?? '', code: d.client.code ?? '' });

const enc = encodeURIComponent;
const appUrl = (id: string) => `/console/operator/applications/${enc(id)}`;

export function operatorLoginView(csrf: string, enabled: boolean, error?: string): Html {
  return html`<div class="card login"><h1>Operator sign-in</h1>
${
  enabled
    ? html`<p class="muted">Sign in with the deployment's operator token (<code>BOXHUB_OPERATOR_TOKEN</code>). An application's API key is no operator credential.</p>
${error ? html`<div class="flash bad" role="alert">${error}</div>` : ''}
<form method="post" action="/console/operator/login">${csrfField(csrf)}
<label for="operator_token">Operator token</label><input id="operator_token" type="password" name="operator_token" autocomplete="off" required>
<button type="submit">Sign in</button></form>`
    : html`<p class="err" id="operator-off">The operator console is off, as the operator API is: set <code>BOXHUB_OPERATOR_TOKEN</code> to use it.</p>`
}
<p><a href="/console/login">Application sign-in</a></p></div>`;
}

export function applicationsView(
  list: { page: number; page_size: number; total: number; applications: ApplicationSummary[] },
  csrf: string,
  created?: CreatedApplication,
): Html {
  return html`<h1>Applications <span class="muted">(${list.total})</span></h1>
${
  created
    ? html`<div class="card" id="new-application"><h2>Application "${created.name}" created</h2>
<p>Shown this once: store them now.</p><dl>
<dt>Application id</dt><dd><code id="new-app-id">${created.id}</code></dd>
<dt>API key</dt><dd><code id="new-app-key">${created.api_key}</code> <span class="muted">(key id <code>${created.key_id}</code>, "default")</span></dd>
<dt>Callback secret</dt><dd><code id="new-app-secret">${created.callback_secret}</code></dd>
<dt>Feedback cards</dt><dd>${created.ess ? 'allowed' : 'not allowed'}</dd></dl></div>`
    : ''
}
<table id="applications"><thead><tr><th>Name</th><th>Id</th><th>Created</th><th>Active keys</th><th>Devices</th><th>Feedback cards</th></tr></thead><tbody>
${list.applications.map(
  (
    a,
  ) => html`<tr class="application" data-id="${a.id}"><td><a class="app-link" href="${appUrl(a.id)}">${a.name}</a></td><td><code>${a.id}</code></td><td>${when(a.created_at)}</td>
<td>${a.active_keys}</td><td>${a.devices}</td><td>${a.ess ? html`<span class="pill on">allowed</span>` : html`<span class="muted">no</span>`}</td></tr>`,
)}
</tbody></table>
${pager('/console/operator/applications', list)}
<div class="card mt"><h2>Create an application</h2>
<form method="post" action="/console/operator/applications/create">${csrfField(csrf)}
<input id="app-name-input" type="text" name="name" placeholder="name" maxlength="200" required aria-label="application name">
<label><input id="app-ess" type="checkbox" name="ess" value="1"> allow feedback-card recognition (ess)</label>
<button id="create-app" type="submit">Create</button></form>
<p class="muted">As <code>POST /api/operator/app/create</code>: one API key named "default" and a callback secret, shown once.</p></div>`;
}

export function applicationView(
  a: { id: string; name: string; ess: boolean; created_at: number },
  keys: KeyView[],
  csrf: string,
  created?: CreatedKey & { rotated: boolean },
  msg?: string,
): Html {
  return html`<p><a href="/console/operator/applications">← Applications</a></p>${notice(msg)}
<h1 id="application-title">${a.name}</h1>
${created ? newKeyCard(created, created.rotated ? 'The key it replaces stopped working at once, on every node.' : "The application's other keys keep working.") : ''}
<div class="card"><dl><dt>Id</dt><dd><code>${a.id}</code></dd><dt>Created</dt><dd>${when(a.created_at)}</dd><dt>Feedback cards</dt><dd>${a.ess ? 'allowed' : 'not allowed'}</dd></dl></div>
<div class="card"><h2>API keys</h2>
${apiKeysTable(keys, csrf, true)}
<form method="post" action="${appUrl(a.id)}/keys/create" class="mt">${csrfField(csrf)}
<input id="key-name" type="text" name="name" placeholder="key name" maxlength="100" required aria-label="key name">
<button id="create-key" type="submit">Create a key</button></form></div>`;
}

export function operatorDevicesView(
  list: { page: number; page_size: number; total: number; devices: OperatorDevice[] },
  csrf: string,
  registered?: RegisteredDevice & { rotated?: boolean },
  msg?: string,
): Html {
  return html`${notice(msg)}<h1>Devices of the deployment <span class="muted">(${list.total})</span></h1>
${
  registered
    ? html`<div class="card" id="new-device"><h2>${registered.rotated ? 'New secret for' : 'Registered'} box <code>${registered.code}</code></h2>
<p>Shown this once: the box agent logs in with it (<code>BOXHUB_DEVICE_UUID</code>, <code>BOXHUB_DEVICE_SECRET</code>).</p>
<dl><dt>UUID</dt><dd><code id="new-device-uuid">${registered.uuid}</code></dd><dt>Secret</dt><dd><code id="new-device-secret">${registered.secret}</code></dd></dl></div>`
    : ''
}
<table id="all-devices"><thead><tr><th>Code</th><th>Model</th><th>UUID</th><th>Application</th><th>State</th><th>Last seen</th><th>Registered</th><th></th></tr></thead><tbody>
${list.devices.map(
  (
    d,
  ) => html`<tr class="device" data-uuid="${d.client.uuid}"><td><code>${d.client.code}</code></td><td class="model">${d.model}</td><td><code>${d.client.uuid}</code></td>
<td>${d.app_id ? html`<a href="${appUrl(d.app_id)}">${d.app_name ?? d.app_id}</a>${d.client.name ? html` <span class="muted">as</span> ${d.client.name}` : ''}` : html`<span class="muted">not bound</span>`}</td>
<td>${d.client.online ? html`<span class="pill on">online</span>` : html`<span class="pill off">offline</span>`}${d.secret_revoked ? html` <span class="pill off">secret revoked</span>` : ''}</td>
<td>${when(d.client.online ? d.client.last_connect_at : (d.client.last_disconnect_at ?? d.client.last_connect_at))}</td><td>${when(d.registered_at)}</td>
<td>${dangerForm(dangers.newDeviceSecret(registeredBox(d)), csrf)}
${d.secret_revoked ? '' : dangerForm(dangers.revokeDevice(registeredBox(d)), csrf)}</td></tr>`,
)}
</tbody></table>
${pager('/console/operator/devices', list)}
<div class="card mt"><h2>Register a box</h2>
<form method="post" action="/console/operator/devices/register">${csrfField(csrf)}
<input id="device-code" type="text" name="code" placeholder="code on the box label" maxlength="64" required aria-label="device code">
<input id="device-model" type="text" name="model" placeholder="model" maxlength="64" required aria-label="model">
<button id="register-device" type="submit">Register</button></form>
<p class="muted">As <code>POST /api/operator/device/register</code>: the box's secret is shown once; an application then binds the box by its code.</p></div>`;
}
