// The create handshake of a task the box carries out (docs/tasks.md, "Creating a task"): the
// same five steps for every such kind. (1) The row and its jobs are written in one transaction,
// with what the kind adds there (a scan binds its recognition address); for a kind whose row is
// a lock (one active scan per device, a partial unique index) a conflict answers with the
// holder, or the insert is tried once more when the holder ended meanwhile; the device must
// still be bound to the task's application then (holdBinding). (2) The start
// command goes to the box, recorded as `sent` in the task's history. (3) No answer in time:
// the task ends through `box.refused` (its lock released); a box that took it after all is told
// to drop it when it next reports its jobs. (4) The box refused: the task is forgotten as if
// never created. (5) The box took it: its acknowledgement is recorded, and a task ended while
// the box was taking it (a cancel or stop raced the create) is dropped on the box.
import { ApiError, type Ack, type CommandType, type ErrorKey, type TaskKind } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { transact } from '../db/transaction.ts';
import type { Trx } from '../jobs/repository.ts';
import type { TaskLifecycle } from './lifecycle.ts';
import type { NewTask, TaskRepository } from './repository.ts';

export interface HandshakeDeps {
  tasks: TaskRepository;
  lifecycle: TaskLifecycle;
  /** Sends a command to a box and resolves with its answer (the box link's gateway; named
   *  here by what the handshake uses, so the task core imports nothing from the box link). */
  gateway: {
    command(uuid: string, type: CommandType, params?: Record<string, unknown>, timeoutMs?: number): Promise<Ack>;
  };
  clock: Clock;
  log?: Logger;
}

/** One create of a box task, as its kind describes it. */
export interface HandshakeSpec {
  task: NewTask & { kind: Exclude<TaskKind, 'recognition'> };
  /** What else is written in the creating transaction (may throw to refuse the create). */
  alsoInTransaction?: (trx: Trx) => Promise<void>;
  /** When the insert meets the kind's lock (a unique violation): the error that answers the
   *  create, or undefined when the holder ended meanwhile and the insert may be tried again.
   *  Without it a unique violation is an error like any other. */
  conflict?: () => Promise<ApiError | undefined>;
  command: CommandType;
  /** The command's parameters, built once the row is written. */
  params: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** The `sent` history entry's detail. */
  sentDetail?: Record<string, unknown>;
  /** The API error for each refusal reason the kind names (any other: DEVICE_REJECTED). */
  refusals: { busy: ErrorKey; not_supported: ErrorKey };
  /** The task's error_message when the box does not answer, for a kind that keeps one. */
  unansweredMessage?: string;
  /** Cleans up after a refusal (files stored for the task). */
  afterRefusal?: () => Promise<void>;
}

export class CreateHandshake {
  private readonly d: HandshakeDeps;
  constructor(d: HandshakeDeps) {
    this.d = d;
  }

  /** Runs the five steps; resolves once the box holds the task, or throws the create's answer. */
  async run(s: HandshakeSpec): Promise<void> {
    const { tasks, lifecycle, gateway, clock } = this.d;
    const { uuid, kind, device_uuid: device } = s.task;
    await this.insert(s);

    await tasks.history.add(tasks.db, uuid, {
      at: clock.now(),
      source: 'server',
      what: 'sent',
      ...(s.sentDetail ? { detail: s.sentDetail } : {}),
    });
    let ack: Ack;
    try {
      ack = await gateway.command(device, s.command, await s.params());
    } catch (e) {
      await transact(tasks.db, async (trx) => {
        const t = await tasks.find(trx, uuid);
        if (t) await lifecycle.end(trx, t, 'box.refused', clock.now(), s.unansweredMessage);
      });
      if (e instanceof ApiError && e.key === 'DEVICE_TIMEOUT')
        throw new ApiError('DEVICE_TIMEOUT', `${e.message}; the ${kind} task ${uuid} was ended`, { uuid });
      throw e;
    }
    if (!ack.ok) {
      await transact(tasks.db, (trx) => lifecycle.discard(trx, uuid));
      await s.afterRefusal?.();
      const why = ack.message ? `: ${ack.message}` : '';
      const key =
        ack.reason === 'busy'
          ? s.refusals.busy
          : ack.reason === 'not_supported'
            ? s.refusals.not_supported
            : 'DEVICE_REJECTED';
      throw new ApiError(key, `the box refused the ${kind}${why}`);
    }
    const boot = typeof ack.data?.boot === 'string' ? ack.data.boot.slice(0, 64) : null;
    let ended: boolean;
    try {
      ended = await transact(tasks.db, async (trx) => {
        const t = await tasks.find(trx, uuid);
        if (!t) return true;
        return (await lifecycle.acknowledge(trx, t, clock.now(), boot)).state === 'ended';
      });
    } catch (err) {
      // The box holds the task and its row exists: the create succeeded, and answering an
      // error would leave a running task its application does not know of (a continuous scan
      // on a refilling feeder scanned for ever in the chaos soak). The box's first event
      // records the acknowledgement instead (the job event router's beforeFirst; docs/tasks.md,
      // "Creating a task"); without one, task.unacked ends it.
      this.d.log?.warn({ err, task: uuid }, 'the box took the task; its acknowledgement is left to its first event');
      return;
    }
    if (ended) await lifecycle.dropOnBox(kind, device, [uuid]);
  }

  /**
   * The device is still bound to the task's application, and stays so until the row is
   * written. The create checked the binding before this transaction; an unbind since then has
   * ended that application's tasks already and would miss this one, which would then run on a
   * box another application may hold (docs/tasks.md, "Ownership ends with the binding"; found
   * by the chaos soak). The no-op update takes the device row's lock on PostgreSQL, which the
   * unbind's update takes too, so one waits for the other and the condition is read again
   * after the wait; SQLite runs one transaction at a time.
   */
  private async holdBinding(trx: Trx, task: NewTask): Promise<void> {
    const r = await trx
      .updateTable('devices')
      .set((eb) => ({ app_id: eb.ref('app_id') }))
      .where('uuid', '=', task.device_uuid)
      .where('app_id', '=', task.app_id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0)
      throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${task.device_uuid}' (unbound meanwhile)`);
  }

  /** Step 1: the row, its jobs and the kind's additions in one transaction. */
  private async insert(s: HandshakeSpec): Promise<void> {
    const { tasks, lifecycle } = this.d;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await transact(tasks.db, async (trx) => {
          await this.holdBinding(trx, s.task);
          await lifecycle.create(trx, s.task);
          await s.alsoInTransaction?.(trx);
        });
        return;
      } catch (e) {
        if (!s.conflict || !isUniqueViolation(e)) throw e;
        const answer = await s.conflict();
        if (answer) throw answer;
      }
    }
    throw new ApiError('SERVICE_UNAVAILABLE', `the device is busy starting and ending ${s.task.kind}s; try again`);
  }
}
