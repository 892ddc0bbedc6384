// Keys: the application's API keys (rotate, revoke), the callback secret (rotation), and its
// public keys for end-to-end encrypted scans (register a new one = rotate), with their key ids.
import type { api } from '@boxhub/protocol';
import type { CreatedKey, KeyView } from '../applications/service.ts';
import { html, when, type Html } from './html.ts';
import { dangers } from './dangers.ts';
import { csrfField, dangerForm, notice } from './widgets.ts';

/** A new API key, shown in the answer that made it and never again. */
export function newKeyCard(k: CreatedKey, note: string): Html {
  return html`<div class="card" id="new-key"><h2>New API key "${k.name}"</h2>
<p>Shown this once: store it now. ${note}</p>
<p><code id="new-api-key">${k.api_key}</code> <span class="muted">(key id <code>${k.id}</code>)</span></p></div>`;
}

/** Keys of an application with their prefixes and last use; rotate and revoke post to the operator's pages or the application's. */
export function apiKeysTable(keys: KeyView[], csrf: string, operator: boolean, sessionKey?: string): Html {
  return html`<table id="api-keys"><thead><tr><th>Name</th><th>Key id</th><th>Prefix</th><th>Created</th><th>Last used</th><th>State</th><th></th></tr></thead><tbody>
${keys.map(
  (
    k,
  ) => html`<tr class="api-key" data-id="${k.id}"><td>${k.name}${k.id === sessionKey ? html` <span class="pill wait">this session</span>` : ''}</td><td><code>${k.id}</code></td><td><code>${k.prefix}…</code></td>
<td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td><td>${k.revoked_at ? html`<span class="pill off">revoked ${when(k.revoked_at)}</span>` : html`<span class="pill on">active</span>`}</td>
<td>${
    k.revoked_at
      ? ''
      : html`${dangerForm(dangers.rotateKey(k, operator), csrf)}
${k.id === sessionKey ? '' : dangerForm(dangers.revokeKey(k, operator), csrf)}`
  }</td></tr>`,
)}
</tbody></table>`;
}

export interface KeysViewData {
  keys: KeyView[];
  sessionKey: string;
  e2e: api.E2eKeyList;
  csrf: string;
  created?: CreatedKey;
  msg?: string;
}

export function keysView(d: KeysViewData): Html {
  return html`${notice(d.msg)}<h1>Keys</h1>
${d.created ? newKeyCard(d.created, 'The key it replaces stopped working at once, on every node.') : ''}
<div class="card"><h2>API keys</h2>
${apiKeysTable(d.keys, d.csrf, false, d.sessionKey)}
<p class="muted">Rotate: a new key with the same name, shown once; the old one stops working at once (rotating the key this session signed in with keeps you signed in, with the new key). Revoke: the key stops working at once. The key this session signed in with cannot be revoked here (rotate it, or sign in with another key). New keys: the operator creates them.</p></div>
<div class="card"><h2>Callback secret</h2>
${dangerForm(dangers.rotateCallbackSecret('rotate-callback-secret', '/console/keys'), d.csrf)}
<p class="muted">The new <code>whsec_</code> secret is shown once; the previous one keeps signing during its grace period.</p></div>
<div class="card"><h2>End-to-end encryption keys</h2>
<table id="e2e-keys"><thead><tr><th>Key id (fingerprint)</th><th>Public key (X25519)</th><th>Registered</th><th>State</th></tr></thead><tbody>
${d.e2e.keys.map(
  (
    k,
  ) => html`<tr class="e2e-key" data-kid="${k.kid}"><td><code class="kid">${k.kid}</code></td><td><code>${k.public_key}</code></td><td>${when(k.created_at)}</td>
<td>${k.current ? html`<span class="pill on">current</span>` : html`<span class="pill off">retired ${when(k.retired_at)}</span>`}</td></tr>`,
)}
</tbody></table>
${d.e2e.keys.length === 0 ? html`<p class="muted">No public key yet: scans with <code>options.encrypt</code> need one.</p>` : ''}
<form method="post" action="/console/keys/e2e">${csrfField(d.csrf)}
<input id="e2e-public-key" type="text" name="public_key" placeholder="raw X25519 public key: 64 hex digits or 43 base64url characters" maxlength="64" required aria-label="public key">
<button id="register-e2e" type="submit">Register (becomes current)</button></form>
<p class="muted">Only the public key comes here; the private key stays with the application (<code>docs/encryption.md</code>). Registering a new key retires the current one; scans keep the key they were created with.</p></div>`;
}
