// Small pieces every console view uses: the CSRF field, notices, state pills, page links.
import { html, type Html } from './html.ts';
import { NOTICES } from './layout.ts';

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

export function notice(msg: string | undefined): Html {
  const text = msg ? NOTICES[msg] : undefined;
  return text ? html`<div class="flash" role="status">${text}</div>` : html``;
}

/** A task's state: ended (with or without an error), or still running. */
export function taskState(state: string, errorCode: number): Html {
  if (state !== 'ended') return html`<span class="pill wait">${state}</span>`;
  return errorCode ? html`<span class="pill off">ended · error ${errorCode}</span>` : html`<span class="pill on">ended</span>`;
}

/** "Page 2 of 5. Previous Next" links to `path?…&page=N` (other query fields kept as given). */
export function pager(path: string, list: { page: number; page_size: number; total: number }, query: Record<string, string> = {}, id = 'pager'): Html | string {
  const pages = Math.max(1, Math.ceil(list.total / list.page_size));
  if (pages <= 1 && list.page <= 1) return '';
  const to = (n: number) => `${path}?${new URLSearchParams({ ...query, page: String(n) }).toString()}`;
  return html`<p class="pager" id="${id}">Page ${list.page} of ${pages}. ${list.page > 1 ? html`<a class="prev" href="${to(list.page - 1)}">Previous</a>` : ''} ${list.page < pages ? html`<a class="next" href="${to(list.page + 1)}">Next</a>` : ''}</p>`;
}
