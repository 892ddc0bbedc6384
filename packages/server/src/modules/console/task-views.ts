// The application-wide task list: scan, print and recognition tasks of every device, newest first.
import { html, when, type Html } from './html.ts';
import { pager, taskState } from './widgets.ts';

export interface TaskRow {
  uuid: string;
  kind: string;
  device_uuid: string;
  state: string;
  created_at: number;
  finished_at: number | null;
  error_code: number;
  item_count: number;
  page_count: number;
}
export const TASK_FILTERS = ['all', 'scan', 'print', 'recognition'] as const;
export type TaskFilter = (typeof TASK_FILTERS)[number];

const enc = encodeURIComponent;

/** Where a task's own page is; null for a scan or print on a box no longer bound here. */
export function taskUrl(t: Pick<TaskRow, 'uuid' | 'kind' | 'device_uuid'>, bound: boolean): string | null {
  if (t.kind === 'recognition') return `/console/recognition/${enc(t.uuid)}`;
  if (!bound) return null;
  return `/console/devices/${enc(t.device_uuid)}/${t.kind === 'scan' ? 'scans' : 'prints'}/${enc(t.uuid)}`;
}

export function tasksView(
  list: { page: number; page_size: number; total: number; tasks: TaskRow[] },
  filter: TaskFilter,
  deviceNames: Map<string, string>,
): Html {
  return html`<h1>Tasks <span class="muted">(${list.total})</span></h1>
<p class="filters">${TASK_FILTERS.map((f) => html`<a class="${f === filter ? 'current' : ''}" href="/console/tasks${f === 'all' ? '' : `?kind=${f}`}">${f}</a> `)}</p>
<table id="task-list"><thead><tr><th>Task</th><th>Kind</th><th>Device</th><th>State</th><th>Created</th><th>Finished</th><th>Items · pages</th></tr></thead><tbody>
${list.tasks.map((t) => {
  const name = deviceNames.get(t.device_uuid);
  const link = taskUrl(t, name !== undefined);
  return html`<tr class="task" data-uuid="${t.uuid}" data-kind="${t.kind}"><td>${link ? html`<a href="${link}"><code>${t.uuid}</code></a>` : html`<code>${t.uuid}</code>`}</td><td>${t.kind}</td>
<td>${t.kind === 'recognition' ? html`<span class="muted">—</span>` : name !== undefined ? html`<a href="/console/devices/${enc(t.device_uuid)}">${name}</a>` : html`<code>${t.device_uuid}</code> <span class="muted">(not bound here)</span>`}</td>
<td>${taskState(t.state, Number(t.error_code))}</td><td>${when(Number(t.created_at))}</td><td>${when(t.finished_at === null ? null : Number(t.finished_at))}</td>
<td>${t.kind === 'scan' ? `${t.item_count} · ${t.page_count}` : ''}</td></tr>`;
})}
</tbody></table>
${list.tasks.length === 0 ? html`<p class="muted">No task yet (tasks are kept until they expire).</p>` : ''}
${pager('/console/tasks', list, filter === 'all' ? {} : { kind: filter })}`;
}
