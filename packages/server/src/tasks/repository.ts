// The only SQL for tasks (docs/tasks.md). Every state change is one conditional UPDATE that
// names the states it may leave (protocol/tasks.ts), so a race loses cleanly. Every method
// takes the caller's transaction: a task's change, its box event and its callback commit
// together.
import { sourcesOf, targetOf, type TaskKind, type TaskTrigger } from '@boxhub/protocol';
import { groupBy } from '../db/turn-batch.ts';
import type { Kysely, Updateable } from 'kysely';
import type { Database, TaskRow, TasksTable } from '../db/schema.ts';
import type { Trx } from '../jobs/repository.ts';
import { TaskHistoryRepository } from './history.ts';

/** Triggers the server decides alone, and how the task's history names them (docs/tasks.md,
 *  "History"); the box's own reports are recorded as they are applied (box-link/job-events.ts). */
const SERVER_ENDINGS: Partial<Record<TaskTrigger, string>> = {
  'box.refused': 'refused',
  'box.lost': 'lost',
  'scan.stop': 'stopped',
  'print.cancel': 'cancelled',
  unbind: 'unbound',
  expire: 'expired',
};

export type NewTask = Pick<
  TaskRow,
  'uuid' | 'kind' | 'app_id' | 'device_uuid' | 'callback_url' | 'options' | 'created_at' | 'expires_at'
> & { file_bytes?: number };

export class TaskRepository {
  readonly db: Kysely<Database>;
  /** Every task's timeline (history.ts). */
  readonly history: TaskHistoryRepository;
  /** Kinds whose tasks keep a timeline: those that run on a box (TaskLifecycle.registerKind). */
  private readonly withHistory = new Set<TaskKind>();
  constructor(db: Kysely<Database>) {
    this.db = db;
    this.history = new TaskHistoryRepository(db);
  }

  /** Whether a kind's tasks keep a timeline, which then records the server's own endings. */
  keepHistory(kind: TaskKind, keep: boolean): void {
    if (keep) this.withHistory.add(kind);
    else this.withHistory.delete(kind);
  }

  /** Inserts a task in state `created`. A second active scan on a device violates the partial
   *  unique index (isUniqueViolation): the caller answers 30204. */
  async insert(trx: Trx, t: NewTask): Promise<void> {
    await trx
      .insertInto('tasks')
      .values({
        ...t,
        state: 'created',
        error_message: null,
        box_boot: null,
        acked_at: null,
        started_at: null,
        finished_at: null,
        pages: null,
        printed_pages: null,
        download_spent_ms: null,
      })
      .execute();
  }

  find(trx: Trx, uuid: string): Promise<TaskRow | undefined> {
    return trx.selectFrom('tasks').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  /** The task if it belongs to this application and device. */
  findFor(appId: string, deviceUuid: string, uuid: string, kind: TaskKind): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('uuid', '=', uuid)
      .where('app_id', '=', appId)
      .where('device_uuid', '=', deviceUuid)
      .where('kind', '=', kind)
      .executeTakeFirst();
  }

  /** The application's newest tasks on a device (the console's device page). */
  recent(
    appId: string,
    deviceUuid: string,
    limit: number,
  ): Promise<Pick<TaskRow, 'uuid' | 'kind' | 'state' | 'created_at' | 'finished_at' | 'error_code'>[]> {
    return this.db
      .selectFrom('tasks')
      .select(['uuid', 'kind', 'state', 'created_at', 'finished_at', 'error_code'])
      .where('device_uuid', '=', deviceUuid)
      .where('app_id', '=', appId)
      .orderBy('created_at', 'desc')
      .orderBy('uuid')
      .limit(limit)
      .execute();
  }

  /**
   * The application's tasks of some kinds, newest first, a page at a time (the console's task
   * list; tasks_app_idx covers it).
   */
  async listForApp(
    appId: string,
    kinds: readonly TaskKind[],
    limit: number,
    offset: number,
  ): Promise<{
    total: number;
    rows: Pick<
      TaskRow,
      | 'uuid'
      | 'kind'
      | 'device_uuid'
      | 'state'
      | 'created_at'
      | 'finished_at'
      | 'error_code'
      | 'item_count'
      | 'page_count'
      | 'expires_at'
    >[];
  }> {
    const q = this.db.selectFrom('tasks').where('app_id', '=', appId).where('kind', 'in', kinds);
    const [count, rows] = await Promise.all([
      q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
      q
        .select([
          'uuid',
          'kind',
          'device_uuid',
          'state',
          'created_at',
          'finished_at',
          'error_code',
          'item_count',
          'page_count',
          'expires_at',
        ])
        .orderBy('created_at', 'desc')
        .orderBy('uuid')
        .limit(limit)
        .offset(offset)
        .execute(),
    ]);
    return { total: Number(count.n), rows };
  }

  /** The device's scan that still holds its lock, if any (`appId`: only that application's). */
  activeScan(trx: Trx, deviceUuid: string, appId?: string): Promise<TaskRow | undefined> {
    let q = trx
      .selectFrom('tasks')
      .selectAll()
      .where('device_uuid', '=', deviceUuid)
      .where('kind', '=', 'scan')
      .where('state', '!=', 'ended');
    if (appId !== undefined) q = q.where('app_id', '=', appId);
    return q.executeTakeFirst();
  }

  /** Every task of the device not ended yet, oldest first (`appId`: only that application's). */
  active(trx: Trx, deviceUuid: string, kind?: TaskKind, appId?: string): Promise<TaskRow[]> {
    let q = trx.selectFrom('tasks').selectAll().where('device_uuid', '=', deviceUuid).where('state', '!=', 'ended');
    if (kind) q = q.where('kind', '=', kind);
    if (appId !== undefined) q = q.where('app_id', '=', appId);
    return q.orderBy('created_at').orderBy('uuid').execute();
  }

  /**
   * Every task not ended yet of each of these devices, oldest first, in one statement (what
   * `active` answers for one device, read for the devices that reported in one turn: TurnBatch).
   */
  async activeOf(devices: string[]): Promise<TaskRow[][]> {
    const rows = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('device_uuid', 'in', devices)
      .where('state', '!=', 'ended')
      .orderBy('created_at')
      .orderBy('uuid')
      .execute();
    return groupBy(devices, rows, (r) => r.device_uuid);
  }

  /**
   * Applies a trigger of the transition table to a task: the state it moves to is the table's
   * (protocol/tasks.ts), and the update happens only while the task is in one of the trigger's
   * source states. Returns the task as it is after, or undefined when the transition did not
   * apply (another change came first). A trigger the table has no row for, for the task's
   * kind, throws (NoTransition): a caller's mistake, not a race.
   */
  async transition(
    trx: Trx,
    task: Pick<TaskRow, 'uuid' | 'kind'>,
    trigger: TaskTrigger,
    set: Updateable<TasksTable> = {},
  ): Promise<TaskRow | undefined> {
    const kind = task.kind as TaskKind;
    const to = targetOf(kind, trigger);
    const from = sourcesOf(kind, trigger);
    const r = await trx
      .updateTable('tasks')
      .set({ ...set, state: to })
      .where('uuid', '=', task.uuid)
      .where('state', 'in', from)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) return undefined;
    const ending = SERVER_ENDINGS[trigger];
    if (ending && this.withHistory.has(kind) && set.finished_at != null) {
      const code = set.error_code != null ? Number(set.error_code) : undefined;
      await this.history.add(trx, task.uuid, {
        at: Number(set.finished_at),
        source: 'server',
        what: ending,
        detail: {
          ...(code !== undefined ? { error_code: code } : {}),
          ...(typeof set.error_message === 'string' ? { message: set.error_message } : {}),
        },
      });
    }
    return this.find(trx, task.uuid);
  }

  /** Records the box's acknowledgement of a task outside the transition (the task has left
   *  `created` already), unless one is recorded: whether this call recorded it. */
  async recordAck(
    trx: Trx,
    uuid: string,
    set: Pick<Updateable<TasksTable>, 'acked_at' | 'box_boot'>,
  ): Promise<boolean> {
    const r = await trx
      .updateTable('tasks')
      .set(set)
      .where('uuid', '=', uuid)
      .where('acked_at', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** Updates fields that are not part of the state (counters, seq). */
  async update(trx: Trx, uuid: string, set: Updateable<TasksTable>): Promise<void> {
    await trx.updateTable('tasks').set(set).where('uuid', '=', uuid).execute();
  }

  /** Destroys a task with its items and applied events (ON DELETE CASCADE). */
  async delete(trx: Trx, uuid: string): Promise<boolean> {
    const r = await trx.deleteFrom('tasks').where('uuid', '=', uuid).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }
}
