// Applies the durable job events boxes send (docs/box-protocol.md, "Jobs"): each event once and
// in order per task. In one transaction the event id is recorded (box_events), the task's seq
// moves on and the feature's effect (an item, the end of a scan, a callback) is written; only
// after the commit is the event acknowledged to the box, which until then keeps it on its disk
// and sends it again after every reconnect. So an event is never lost (the box holds it until
// the database does) and never applied twice (its id and seq are in the database).
import {
  JobEventData,
  parseJson,
  type JobEvent,
  type JobEventType,
  type TaskKind,
  type TypedJobEvent,
} from '@boxhub/protocol';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Database, TaskRow } from '../db/schema.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Trx } from '../jobs/repository.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import type { BoxGateway } from './gateway.ts';
import { transact } from '../db/transaction.ts';
import { historyOfEvent } from '../tasks/history-of-event.ts';

export interface EventContext<T extends JobEventType = JobEventType> {
  device: string;
  task: TaskRow;
  event: Extract<TypedJobEvent, { type: T }>;
  now: number;
  /** What the event's check found (EventCheck), present when it ran. */
  checked?: { value: unknown };
  /** Runs `fn` after the transaction commits (e.g. a box command). */
  afterCommit(fn: () => Promise<void> | void): void;
}

export type EventApplier<T extends JobEventType = JobEventType> = (trx: Trx, ctx: EventContext<T>) => Promise<void>;

/**
 * What an event's applier needs found out over the network (a stored file's size and MD5),
 * found before its transaction opens: a transaction waiting on S3 held SQLite's one connection,
 * and so every statement of the node, for as long as S3 took to answer. It runs when the event
 * is next in its task's order as the task stood just before (a race with another node can skip
 * it: the applier then finds no `checked`). A check that throws leaves the event
 * unapplied and unacknowledged, as a failed transaction does: the box sends it again.
 */
export type EventCheck<T extends JobEventType = JobEventType> = (
  task: TaskRow,
  event: Extract<TypedJobEvent, { type: T }>,
) => Promise<unknown>;

export type EventOutcome =
  | 'applied'
  | 'duplicate'
  | 'unknown-task'
  | 'out-of-order'
  | 'invalid'
  | 'wrong-kind'
  | 'not-ready';

export class JobEventRouter {
  private readonly appliers = new Map<JobEventType, EventApplier>();
  private readonly checks = new Map<JobEventType, EventCheck>();
  /** The kind of task each event is about (its kind's declaration, modules/kinds.ts): an event
   *  is applied only to a task of its kind. */
  private readonly kinds = new Map<JobEventType, TaskKind>();
  /** Runs before the first applied event of a task the server has not seen acknowledged. */
  beforeFirst: ((trx: Trx, task: TaskRow, now: number) => Promise<TaskRow>) | undefined;
  private readonly pendingAcks = new Map<string, string[]>();
  private ackQueued = false;
  private readonly db: Kysely<Database>;
  private readonly tasks: TaskRepository;
  private readonly gateway: Pick<BoxGateway, 'onJobEvent' | 'send'>;
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(o: {
    db: Kysely<Database>;
    tasks: TaskRepository;
    gateway: Pick<BoxGateway, 'onJobEvent' | 'send'>;
    clock: Clock;
    log: Logger;
  }) {
    this.db = o.db;
    this.tasks = o.tasks;
    this.gateway = o.gateway;
    this.clock = o.clock;
    this.log = o.log;
    this.gateway.onJobEvent((uuid, e) => this.handle(uuid, e).then(() => undefined));
  }

  /** Registers the applier of an event about tasks of one kind, and its check if it has one. */
  on<T extends JobEventType>(kind: TaskKind, type: T, applier: EventApplier<T>, check?: EventCheck<T>): void {
    this.kinds.set(type, kind);
    this.appliers.set(type, applier as unknown as EventApplier);
    if (check) this.checks.set(type, check as unknown as EventCheck);
  }

  /** Runs the event's check (EventCheck) outside any transaction, when the event is next in its
   *  task's order; what it found, or undefined when it did not run. */
  private async check(device: string, e: TypedJobEvent): Promise<{ value: unknown } | undefined> {
    const check = this.checks.get(e.type);
    if (!check) return undefined;
    const task = await this.tasks.find(this.db, e.task);
    if (!task || task.device_uuid !== device || task.kind !== this.kinds.get(e.type) || e.seq !== task.last_seq + 1)
      return undefined;
    return { value: await check(task, e) };
  }

  /** Applies one event; acknowledges it unless it came before an earlier one of its task. */
  async handle(device: string, e: JobEvent): Promise<EventOutcome> {
    const data = parseJson(JobEventData[e.type], JSON.stringify(e.data));
    if (!data.ok) {
      // It will never become valid: acknowledged so the box can drop it, and logged.
      this.log.error({ device, task: e.task, type: e.type, error: data.error }, 'box job event rejected: invalid data');
      this.ack(device, e.id);
      return 'invalid';
    }
    const applier = this.appliers.get(e.type);
    // Every event type has its applier once the node has built its task kinds (kinds.ts;
    // kinds.test.ts). None yet is a node still starting: applied then, the event would be
    // acknowledged and its task never changed (lost); unacknowledged, the box sends it again.
    if (!applier) {
      this.log.warn({ device, task: e.task, type: e.type }, 'box job event before its applier: not acknowledged');
      return 'not-ready';
    }
    const after: (() => Promise<void> | void)[] = [];
    const now = this.clock.now();
    const typed = { ...e, data: data.value } as TypedJobEvent;
    const checked = await this.check(device, typed);
    let outcome: EventOutcome;
    try {
      outcome = await transact(this.db, async (trx) => {
        const task = await this.tasks.find(trx, e.task);
        // Destroyed (expired) or never this box's: nothing to apply; the box may forget it.
        if (!task || task.device_uuid !== device) return 'unknown-task';
        // A scan event on the box's own print task (or the other way round) means nothing for
        // it: dropped like invalid data, the task untouched (its seq too).
        const kind = this.kinds.get(e.type);
        if (kind !== undefined && task.kind !== kind) return 'wrong-kind';
        if (e.seq <= task.last_seq) return 'duplicate';
        // An earlier event is missing: the box re-sends everything unacknowledged in order.
        if (e.seq > task.last_seq + 1) return 'out-of-order';
        await trx
          .insertInto('box_events')
          .values({ id: e.id, task_uuid: e.task, seq: e.seq, type: e.type, received_at: now })
          .execute();
        // An event proves the box holds the task, whether or not its ack has been handled yet.
        const current = task.acked_at === null && this.beforeFirst ? await this.beforeFirst(trx, task, now) : task;
        // Its task's history first (docs/tasks.md, "History"): the box's report, before what it causes.
        await this.tasks.history.add(trx, e.task, { at: now, ...historyOfEvent(typed) });
        await applier(trx, {
          device,
          task: current,
          event: typed,
          now,
          ...(checked ? { checked } : {}),
          afterCommit: (fn) => after.push(fn),
        });
        await this.tasks.update(trx, e.task, { last_seq: e.seq });
        return 'applied';
      });
    } catch (err) {
      // The same event id under another seq (a box bug) or a concurrent node applied it first.
      if (isUniqueViolation(err)) outcome = 'duplicate';
      else throw err;
    }
    if (outcome === 'out-of-order') {
      this.log.debug({ device, task: e.task, seq: e.seq }, 'box job event ahead of an earlier one: not acknowledged');
      return outcome;
    }
    if (outcome === 'wrong-kind')
      this.log.error({ device, task: e.task, type: e.type }, 'box job event rejected: the task is of another kind');
    if (outcome === 'unknown-task')
      this.log.info(
        { device, task: e.task, type: e.type },
        'box job event for a task that does not exist (expired?): acknowledged and dropped',
      );
    this.ack(device, e.id);
    for (const fn of after) {
      try {
        await fn();
      } catch (err) {
        this.log.warn({ err, device }, 'after-commit step of a box event failed');
      }
    }
    return outcome;
  }

  /** Acknowledgements of one turn of the event loop go to each box in one message. */
  private ack(device: string, id: string): void {
    const list = this.pendingAcks.get(device) ?? [];
    list.push(id);
    this.pendingAcks.set(device, list);
    if (this.ackQueued) return;
    this.ackQueued = true;
    setImmediate(() => {
      this.ackQueued = false;
      const all = [...this.pendingAcks];
      this.pendingAcks.clear();
      for (const [uuid, ids] of all) {
        for (let i = 0; i < ids.length; i += 1000) {
          this.gateway
            .send(uuid, 'events.ack', { ids: ids.slice(i, i + 1000) })
            .catch((err: unknown) =>
              this.log.warn({ err, uuid }, 'events.ack not sent; the box will send the events again'),
            );
        }
      }
    });
  }
}
