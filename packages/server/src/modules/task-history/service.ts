// Reading a task's history (docs/tasks.md, "History"): an application sees its own scan and
// print tasks only, until they expire.
import { ApiError, type api } from '@boxhub/protocol';
import type { TaskRepository } from '../../tasks/repository.ts';

export class TaskHistoryService {
  private readonly tasks: TaskRepository;
  constructor(tasks: TaskRepository) {
    this.tasks = tasks;
  }

  async read(appId: string, uuid: string): Promise<api.TaskHistory> {
    const t = await this.tasks.find(this.tasks.db, uuid);
    if (!t || t.app_id !== appId || (t.kind !== 'scan' && t.kind !== 'print')) {
      throw new ApiError(
        'NOT_FOUND',
        `no scan or print task '${uuid}' of this application (tasks and their history are destroyed at expires_at)`,
      );
    }
    return {
      uuid: t.uuid,
      kind: t.kind,
      client_uuid: t.device_uuid,
      entries: (await this.tasks.history.list(t.uuid)) as api.TaskHistoryEntry[],
    };
  }
}
