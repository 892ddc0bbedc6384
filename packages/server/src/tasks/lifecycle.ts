// What every task shares, whatever its kind (docs/tasks.md): it is created with its expiry job in
// one transaction; at expires_at it is destroyed with its files, and nothing of it can be read any
// more (docs/api.md, "Scan task", "Print task"); and the server keeps its view of a box's tasks in
// step with what the box reports it holds (docs/api.md, "Scan task": stop also clears a scan after
// a power loss). The kind's own rules (which callback, which error code) come from its hooks.
import type { BoxState, TaskKind } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { TaskRow } from '../db/schema.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Trx } from '../jobs/repository.ts';
import type { JobHandler } from '../jobs/runner.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { NewTask, TaskRepository } from './repository.ts';
import { transact } from '../db/transaction.ts';
import { TurnBatch } from '../db/turn-batch.ts';

export const EXPIRE_JOB = 'task.expire';
/** A scan or print task whose box acknowledgement was never recorded (docs/tasks.md, "A create
 *  that never finished"): ended once this long after its creation. The create itself waits for
 *  the box at most the command timeout (seconds), so only a create that failed half-way (its
 *  node killed, its database gone) is still unacknowledged by then. */
export const UNACKED_JOB = 'task.unacked';
export const UNACKED_AFTER_MS = 2 * 60_000;
export const TASK_PAGE_SIZE = 20;

/** Why the server ends a task without its box. */
export type EndReason = 'box.lost' | 'expire' | 'unbind' | 'box.refused';

export interface TaskKindHooks {
  /** The box has taken the task (its ack, or its first event, whichever the server sees first):
   *  the kind's callback for that, in the caller's transaction. */
  acked?(trx: Trx, task: TaskRow, now: number): Promise<void>;
  /** Ends an active task without its box (the box lost it, it expired, or its application
   *  unbound the box): state, error code and callbacks, in the caller's transaction. */
  end(trx: Trx, task: TaskRow, why: EndReason, now: number, message?: string): Promise<void>;
  /** Tells a box to drop tasks it still holds although the server has ended them. */
  dropOnBox(device: string, tasks: string[]): Promise<void>;
}

export interface TaskLifecycleDeps {
  tasks: TaskRepository;
  jobs: Jobs;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
}

export class TaskLifecycle {
  private readonly d: TaskLifecycleDeps;
  /** By kind name: registerKind() adds only TaskKinds, a task row's kind is text, looked up as is. */
  private readonly hooks = new Map<string, TaskKindHooks>();
  /** Kinds whose tasks run on a box (modules/kinds.ts). */
  private readonly onBox = new Set<string>();
  /**
   * The active tasks of every box that reported its state in one turn, read with one statement:
   * a node's return brings a state report from every box within seconds (bench/README.md,
   * "reconnect-storm").
   */
  private readonly activeOf = new TurnBatch<string, TaskRow[]>((devices) => this.d.tasks.activeOf(devices));

  constructor(d: TaskLifecycleDeps) {
    this.d = d;
  }

  /** Registers a kind's hooks (modules/kinds.ts, from its declaration). `onBox`: its tasks run
   *  on a box, so they wait for its acknowledgement and end when their application unbinds it. */
  registerKind(kind: TaskKind, hooks: TaskKindHooks, o: { onBox: boolean }): void {
    this.hooks.set(kind, hooks);
    if (o.onBox) this.onBox.add(kind);
    else this.onBox.delete(kind);
    this.d.tasks.keepHistory(kind, o.onBox);
  }

  /** The application's newest scan and print tasks on a device, newest first (until they expire). */
  recent(appId: string, deviceUuid: string, limit = 10) {
    return this.d.tasks.recent(appId, deviceUuid, limit);
  }

  /** The application's tasks of these kinds on every device, newest first, TASK_PAGE_SIZE a page. */
  async list(appId: string, kinds: readonly TaskKind[], page: number) {
    const { total, rows } = await this.d.tasks.listForApp(appId, kinds, TASK_PAGE_SIZE, (page - 1) * TASK_PAGE_SIZE);
    return { page, page_size: TASK_PAGE_SIZE, total, tasks: rows };
  }

  /** Records a task and its expiry in the caller's transaction. */
  async create(trx: Trx, t: NewTask): Promise<void> {
    const onBox = this.onBox.has(t.kind);
    await this.d.tasks.insert(trx, t);
    if (onBox)
      await this.d.tasks.history.add(trx, t.uuid, {
        at: t.created_at,
        source: 'server',
        what: 'created',
        detail: { kind: t.kind },
      });
    await this.d.jobs.schedule(trx, { kind: EXPIRE_JOB, ref: t.uuid, runAt: t.expires_at });
    if (onBox)
      await this.d.jobs.schedule(trx, { kind: UNACKED_JOB, ref: t.uuid, runAt: t.created_at + UNACKED_AFTER_MS });
  }

  /**
   * Records that the box holds the task (action_ack, action_ack_at; docs/tasks.md), once: from the box's
   * acknowledgement of the start command, or from any event of the task if that is seen first
   * (the box may report progress before the command's answer is handled). Returns the task as
   * it is after.
   */
  async acknowledge(trx: Trx, task: TaskRow, now: number, boot?: string | null): Promise<TaskRow> {
    if (task.acked_at !== null) {
      if (boot && !task.box_boot) await this.d.tasks.update(trx, task.uuid, { box_boot: boot });
      return (await this.d.tasks.find(trx, task.uuid)) ?? task;
    }
    const set = { acked_at: now, ...(boot ? { box_boot: boot } : {}) };
    // Recorded first, and only where no acknowledgement is yet: the start command's answer and
    // the box's first event may be handled at once (two nodes, or two transactions on
    // PostgreSQL), and only the one that records it cancels the unacked job, writes the history
    // and tells the kind (print.ack goes out once). A task ended before its box answered (a
    // cancel racing the create) is not in `created` any more; it is acknowledged all the same.
    const moved = await this.d.tasks.transition(trx, task, 'box.ack', set);
    if (!moved && !(await this.d.tasks.recordAck(trx, task.uuid, set))) {
      if (boot) await this.d.tasks.update(trx, task.uuid, { box_boot: boot });
      return (await this.d.tasks.find(trx, task.uuid)) ?? task;
    }
    await this.d.jobs.cancel(trx, UNACKED_JOB, task.uuid);
    await this.d.tasks.history.add(trx, task.uuid, {
      at: now,
      source: 'box',
      what: 'acknowledged',
      detail: boot ? { boot } : {},
    });
    const after = (await this.d.tasks.find(trx, task.uuid)) ?? task;
    await this.hooks.get(task.kind)?.acked?.(trx, after, now);
    return after;
  }

  /** Ends an active task without its box through its kind's hooks (`message`: the task's
   *  error_message, for a kind that keeps one). */
  async end(trx: Trx, task: TaskRow, why: EndReason, now: number, message?: string): Promise<void> {
    await this.hooks.get(task.kind)?.end(trx, task, why, now, message);
  }

  /** Tells a box to drop tasks of a kind the server has ended (the kind's command). */
  async dropOnBox(kind: TaskKind, device: string, tasks: string[]): Promise<void> {
    await this.hooks.get(kind)?.dropOnBox(device, tasks);
  }

  /** Forgets a task that never went anywhere (the box refused it), with its expiry. */
  async discard(trx: Trx, uuid: string): Promise<void> {
    await this.d.jobs.cancel(trx, EXPIRE_JOB, uuid);
    await this.d.jobs.cancel(trx, UNACKED_JOB, uuid);
    await this.d.tasks.delete(trx, uuid);
  }

  /**
   * Ends the application's active scan and print tasks on a device (docs/tasks.md, "Ownership
   * ends with the binding"): each with the kind's unbound code and its final callback to its
   * own application, then the box is told to drop them (`createdBefore`: only tasks created
   * before then, those of an earlier binding). Returns how many ended.
   */
  async endForApp(appId: string, device: string, createdBefore?: number): Promise<number> {
    const { tasks, clock } = this.d;
    const ended = new Map<string, string[]>();
    await transact(tasks.db, async (trx) => {
      ended.clear(); // a transaction run again after a conflict starts over
      for (const t of await tasks.active(trx, device, undefined, appId)) {
        if (createdBefore !== undefined && t.created_at >= createdBefore) continue;
        const hooks = this.hooks.get(t.kind);
        if (!hooks || !this.onBox.has(t.kind)) continue;
        await hooks.end(trx, t, 'unbind', clock.now());
        ended.set(t.kind, [...(ended.get(t.kind) ?? []), t.uuid]);
      }
    });
    for (const [kind, ids] of ended) {
      this.d.log.info({ device, kind, tasks: ids }, 'the application unbound the box: its tasks there ended');
      await this.hooks
        .get(kind)
        ?.dropOnBox(device, ids)
        .catch((err: unknown) =>
          this.d.log.warn({ err, device }, 'could not tell the box to drop the tasks of an unbound application'),
        );
    }
    return [...ended.values()].reduce((n, l) => n + l.length, 0);
  }

  /** Where a task's files live in the blob store. */
  static prefix(task: Pick<TaskRow, 'kind' | 'uuid'>): string {
    return `${task.kind}/${task.uuid}`;
  }

  /** The `task.expire` job: ends the task if it is still active, deletes its files, then its rows. */
  expiryHandler(): JobHandler {
    return {
      kind: EXPIRE_JOB,
      concurrency: 8,
      leaseMs: 5 * 60_000,
      run: async (job) => {
        const { tasks, clock } = this.d;
        const task = await tasks.find(tasks.db, job.ref);
        if (!task) return { next: 'done' };
        const hooks = this.hooks.get(task.kind);
        if (task.state !== 'ended') {
          // The end is recorded before the box hears of it, so its own report of the end (a
          // stopped scan) cannot come first and take the expiry's error code.
          await transact(tasks.db, async (trx) => {
            const current = await tasks.find(trx, task.uuid);
            if (current && current.state !== 'ended') await hooks?.end(trx, current, 'expire', clock.now());
          });
          await hooks?.dropOnBox(task.device_uuid, [task.uuid]).catch(() => undefined);
        }
        // Files next: a node that dies after this runs the job again and finds nothing left to
        // delete; the rows go in the settling transaction, only while this claim holds.
        await this.d.blobs.deletePrefix(TaskLifecycle.prefix(task));
        return {
          next: 'done',
          effect: async (trx) => {
            if (await tasks.delete(trx, task.uuid))
              this.d.log.info({ task: task.uuid, kind: task.kind }, 'task expired and destroyed');
          },
        };
      },
    };
  }

  /**
   * The `task.unacked` job: a scan or print task still waiting for its box's acknowledgement
   * UNACKED_AFTER_MS after it was created belongs to a create that failed half-way (the node
   * that made it was killed, or its database failed, before the box's answer was recorded), so
   * its caller was never told it exists. Left alone it would hold the device until it expires
   * (a second scan answers 30204 for a day); it ends as not acknowledged, with its callback, and
   * a box that took it after all is told to drop it. A task the box reported on meanwhile (its
   * first event acknowledges it) is left alone.
   */
  unackedHandler(): JobHandler {
    return {
      kind: UNACKED_JOB,
      concurrency: 8,
      leaseMs: 60_000,
      run: async (job) => {
        const { tasks, clock } = this.d;
        const task = await tasks.find(tasks.db, job.ref);
        if (!task || task.acked_at !== null || task.state !== 'created') return { next: 'done' };
        const hooks = this.hooks.get(task.kind);
        if (!hooks) return { next: 'done' };
        let ended = false;
        await transact(tasks.db, async (trx) => {
          const current = await tasks.find(trx, task.uuid);
          if (!current || current.acked_at !== null || current.state !== 'created') return;
          await hooks.end(trx, current, 'box.refused', clock.now());
          ended = true;
        });
        if (ended) {
          this.d.log.warn(
            { task: task.uuid, kind: task.kind, device: task.device_uuid },
            'a task whose create never finished (no acknowledgement recorded): ended',
          );
          await hooks.dropOnBox(task.device_uuid, [task.uuid]).catch(() => undefined);
        }
        return { next: 'done' };
      },
    };
  }

  /**
   * Brings the server's view of a box's tasks in line with what the box says it holds. A task
   * the box took under an earlier boot and no longer lists was lost with that boot (power cut,
   * wiped disk): it ends with the kind's error. A task the box holds that the server has ended
   * (stopped or cancelled while the box was away) is dropped on the box. A box lists a task
   * until the server has acknowledged its final event (state `ending`), so a task that finished
   * while the box was cut off is not mistaken for a lost one.
   */
  async reconcile(device: string, state: BoxState): Promise<void> {
    if (!state.boot || !state.jobs) return;
    const listed = new Map(state.jobs.map((j) => [j.task, j]));
    const { tasks, clock } = this.d;
    const active = await this.activeOf.add(device);
    for (const t of active) {
      if (listed.has(t.uuid) || !t.box_boot || t.box_boot === state.boot) continue;
      const hooks = this.hooks.get(t.kind);
      if (!hooks) continue;
      await transact(tasks.db, async (trx) => {
        const current = await tasks.find(trx, t.uuid);
        if (current && current.state !== 'ended') await hooks.end(trx, current, 'box.lost', clock.now());
      });
      this.d.log.warn({ device, task: t.uuid, kind: t.kind }, 'the box restarted and no longer holds this task: ended');
    }
    const activeIds = new Set(active.map((t) => t.uuid));
    const stale = new Map<TaskKind, string[]>();
    for (const j of state.jobs) {
      if (j.state === 'ending' || activeIds.has(j.task)) continue;
      stale.set(j.kind, [...(stale.get(j.kind) ?? []), j.task]);
    }
    for (const [kind, ids] of stale) {
      await this.hooks
        .get(kind)
        ?.dropOnBox(device, ids)
        .catch((err: unknown) => this.d.log.warn({ err, device }, 'could not tell the box to drop ended tasks'));
    }
  }
}
