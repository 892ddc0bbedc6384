// Small pieces every console view uses: the CSRF field, destructive buttons and their
// confirmation, notices, state pills, page links.
import type { Danger } from './dangers.ts';
import { html, type Html } from './html.ts';
import { NOTICES } from './layout.ts';

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** The field that says a destructive form was confirmed (the script or the confirmation page adds it). */
export const CONFIRMED_FIELD = '_confirmed';

/**
 * The button of a destructive action (dangers.ts). The form carries the question in
 * `data-confirm`: the console's script (/console/assets/console.js) asks it in a dialog and, on
 * yes, sends the form with `_confirmed=1`. Without the script the form goes without it, and the
 * route answers with the confirmation page instead of acting (`askFirst` in kit.ts).
 */
export function dangerForm(d: Danger, csrf: string): Html {
  return html`<form method="post" action="${d.action}" class="inline" data-confirm="${d.ask}" data-confirm-yes="${d.yes}">${csrfField(csrf)}<button${d.id ? html` id="${d.id}"` : ''}${d.cls ? html` class="${d.cls}"` : ''} type="submit">${d.button}</button></form>`;
}

/** The confirmation page: the question, the confirming form (with `_confirmed=1`), and Cancel. */
export function confirmView(d: Danger, csrf: string): Html {
  return html`<div class="card confirm" id="confirm"><h1>Are you sure?</h1>
<p id="confirm-ask">${d.ask}</p>
<form method="post" action="${d.action}">${csrfField(csrf)}<input type="hidden" name="${CONFIRMED_FIELD}" value="1">
<button id="confirm-yes" class="danger" type="submit">${d.yes}</button> <a id="confirm-no" class="cancel" href="${d.back}">Cancel</a></form></div>`;
}

export function notice(msg: string | undefined): Html {
  const text = msg ? NOTICES[msg] : undefined;
  return text ? html`<div class="flash" role="status">${text}</div>` : html``;
}

/** A task's state: ended (with or without an error), or still running. */
export function taskState(state: string, errorCode: number): Html {
  if (state !== 'ended') return html`<span class="pill wait">${state}</span>`;
  return errorCode
    ? html`<span class="pill off">ended · error ${errorCode}</span>`
    : html`<span class="pill on">ended</span>`;
}

/** "Page 2 of 5. Previous Next" links to `path?…&page=N` (other query fields kept as given). */
export function pager(
  path: string,
  list: { page: number; page_size: number; total: number },
  query: Record<string, string> = {},
  id = 'pager',
): Html | string {
  const pages = Math.max(1, Math.ceil(list.total / list.page_size));
  if (pages <= 1 && list.page <= 1) return '';
  const to = (n: number) => `${path}?${new URLSearchParams({ ...query, page: String(n) }).toString()}`;
  return html`<p class="pager" id="${id}">Page ${list.page} of ${pages}. ${list.page > 1 ? html`<a class="prev" href="${to(list.page - 1)}">Previous</a>` : ''} ${list.page < pages ? html`<a class="next" href="${to(list.page + 1)}">Next</a>` : ''}</p>`;
}
