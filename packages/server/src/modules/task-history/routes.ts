import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.ts';
import type { TaskHistoryService } from './service.ts';

// boxhub extension (docs/tasks.md, "History").
export const taskHistoryRoutes: FastifyPluginAsyncTypebox<{ history: TaskHistoryService }> = async (
  app,
  { history },
) => {
  app.get(
    '/api/task/history',
    {
      schema: {
        tags: ['task'],
        summary: "A scan or print task's history: what happened and who said so, oldest first",
        querystring: api.TaskHistoryQuery,
        response: { 200: api.TaskHistoryResponse },
      },
    },
    async (req) => ok(await history.read(req.application.id, req.query.uuid)),
  );
};
