// The page around every console view: navigation, who is signed in (an application or the
// operator), sign-out.
import { html, type Html } from './html.ts';

export interface PageContext {
  appName?: string;
  operator?: boolean;
  csrf?: string;
}

function nav(ctx: PageContext): Html | string {
  if (ctx.operator) {
    return html`<a href="/console/operator/applications">Applications</a><a href="/console/operator/devices">Devices</a><a href="/console/operator/fleet">Fleet</a><a href="/console/operator/rollouts">Rollouts</a>
<span class="app"><b id="operator-badge">operator</b></span>
<form method="post" action="/console/operator/logout"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button class="secondary" type="submit">Sign out</button></form>`;
  }
  if (ctx.appName === undefined) return '';
  return html`<a href="/console/devices">Devices</a><a href="/console/tasks">Tasks</a><a href="/console/recognition">Recognition</a><a href="/console/templates">Card templates</a><a href="/console/callbacks">Callbacks</a><a href="/console/keys">Keys</a>
<span class="app">application <b id="app-name">${ctx.appName}</b></span>
<form method="post" action="/console/logout"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button class="secondary" type="submit">Sign out</button></form>`;
}

export function page(title: string, ctx: PageContext, body: Html): string {
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'>
<title>${title} · boxhub console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/htmx.min.js" defer></script>
<script src="/console/assets/console.js" defer></script>
</head><body>
<header><a class="brand" href="${ctx.operator ? '/console/operator' : '/console'}">boxhub console</a>
${nav(ctx)}
</header>
<main>${body}</main>
</body></html>`.text
  }`;
}

/** Notices a redirect may ask for (?msg=…): a fixed list, so nothing from the URL is shown. */
export const NOTICES: Record<string, string> = {
  buzzed: 'The box buzzes.',
  bound: 'Device bound to this application.',
  unbound: 'Device unbound: it no longer belongs to this application.',
  rebooting: 'The box is rebooting.',
  renamed: 'Device renamed.',
  head_clean: 'The printer has cleaned its print head; print a nozzle check page to verify.',
  nozzle_check: 'The printer has printed a nozzle check page.',
  power_ink_flush: 'The printer has run a power ink flush; the next is allowed in 24 hours.',
  prints_cancelled: 'Every print task of the box is cancelled and its queue emptied.',
  replayed: 'Callback queued for delivery again.',
  tested: 'Test callback queued; it is listed below.',
  template_created: 'Card template created.',
  corrected: "Correction saved; the corrected result is on its way to the task's callback URL.",
  template_deleted: 'Card template deleted: its cards are no longer recognized for this application.',
  key_revoked: 'API key revoked: it stops working at once, on every node.',
  e2e_registered: 'Public key registered: scans created from now on with encryption are encrypted to it.',
  device_revoked: "The box's secret is revoked: it cannot log in until its secret is rotated.",
};
