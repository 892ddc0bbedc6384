// The application-wide task list (docs/console.md "Pages"): every device's scan and print tasks
// and the recognition tasks, newest first, 20 a page, from the task table the API's tasks use.
import type { TaskKind } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';
import { pageNumber, sess, show, type ConsoleOptions } from './kit.ts';
import { TASK_FILTERS, tasksView, type TaskFilter } from './task-views.ts';

export function taskPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  app.get<{ Querystring: { kind?: string; page?: string } }>('/console/tasks', async (req, reply) => {
    const appId = sess(req).appId;
    const filter: TaskFilter = (TASK_FILTERS as readonly string[]).includes(req.query.kind ?? '')
      ? (req.query.kind as TaskFilter)
      : 'all';
    const kinds: TaskKind[] = filter === 'all' ? ['scan', 'print', 'recognition'] : [filter];
    const list = await s.lifecycle.list(appId, kinds, pageNumber(req.query.page));
    return show(
      reply,
      req,
      'Tasks',
      tasksView(
        list,
        filter,
        await deviceNames(
          o,
          appId,
          list.tasks.map((t) => t.device_uuid),
        ),
      ),
    );
  });
}

/** The names of those devices still bound to the application (others are left out). */
export async function deviceNames(o: ConsoleOptions, appId: string, uuids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const uuid of new Set(uuids.filter(Boolean))) {
    const row = await o.services.devices.bound(appId, uuid).catch(() => undefined);
    if (row) names.set(uuid, row.name ?? uuid);
  }
  return names;
}
