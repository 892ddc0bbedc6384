// What scan and print tasks share (docs/tasks.md): their history.
import type { GetResult, Query } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type TaskHistory = GetResult<'/api/task/history'>;
export type TaskHistoryEntry = TaskHistory['entries'][number];

export class Tasks {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** A scan or print task's timeline, oldest first: what happened and who said so (server,
   *  box, printer, scanner); docs/tasks.md, "History". 20404 once the task has expired. */
  history(query: Query<'/api/task/history'>, o?: CallOptions) {
    return this.#t.get('/api/task/history', query, o);
  }
}
