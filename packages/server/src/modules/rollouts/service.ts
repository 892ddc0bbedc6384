// Rollouts (docs/updates.md, "Rollouts"): a release sent to chosen boxes in waves. One job per
// rollout (`rollout.step`, docs/jobs.md) moves it on: it sends the release to the boxes of the
// waves under way that are online and have not taken it, reads what each box reports (its
// `version`, its `update` report), stops the rollout as soon as more than `max_failed_pct` of a
// wave failed, and starts the next wave a pause after one settles. A box that is offline when
// its wave comes stays pending and is sent the release when it is back, until the rollout ends.
// A box busy with a scan or print takes the release and switches once its jobs are done (the
// agent waits: packages/agent/src/update/updater.ts).
import { randomInt, randomUUID } from 'node:crypto';
import { ApiError, type Ack, type api } from '@boxhub/protocol';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Database, RolloutBoxesTable, RolloutsTable } from '../../db/schema.ts';
import { transact } from '../../db/transaction.ts';
import { TurnBatch } from '../../db/turn-batch.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { JobHandler, JobResult } from '../../jobs/runner.ts';
import { parseState } from '../devices/view.ts';
import type { ReleaseRow, ReleaseService } from '../releases/service.ts';
import { waveFailed, waveSizes } from './waves.ts';

export const ROLLOUT_JOB = 'rollout.step';

export interface RolloutSettings {
  /** Time between steps of a running rollout (a box's report also makes its step due at once). */
  stepMs: number;
  /** How long a box has to acknowledge the command (it answers once the manifest is checked). */
  sendTimeoutMs: number;
  /** Commands in flight at once per step. */
  sendConcurrency: number;
}

export const DEFAULT_ROLLOUT_SETTINGS: RolloutSettings = { stepMs: 2000, sendTimeoutMs: 5000, sendConcurrency: 32 };

const FAILED_OUTCOMES = new Set(['rolled_back', 'failed', 'refused', 'interrupted']);

type BoxRow = Pick<RolloutBoxesTable, 'device_uuid' | 'wave' | 'state' | 'reason'> & {
  online: number | null;
  state_json: string | null;
  state_at: number | null;
};

export class RolloutService {
  private readonly db: Kysely<Database>;
  private readonly jobs: Jobs;
  private readonly releases: ReleaseService;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly s: RolloutSettings;
  constructor(d: {
    db: Kysely<Database>;
    jobs: Jobs;
    releases: ReleaseService;
    clock: Clock;
    log: Logger;
    settings?: Partial<RolloutSettings>;
  }) {
    this.db = d.db;
    this.jobs = d.jobs;
    this.releases = d.releases;
    this.clock = d.clock;
    this.log = d.log;
    this.s = { ...DEFAULT_ROLLOUT_SETTINGS, ...d.settings };
  }

  async create(body: api.RolloutCreateBody): Promise<api.RolloutView> {
    const release = await this.releases.get(body.release_id);
    const uuids = await this.select(body);
    const sizes = waveSizes(uuids.length, body.waves ?? 3);
    const now = this.clock.now();
    const id = randomUUID();
    const row: RolloutsTable = {
      id,
      release_id: release.id,
      state: 'running',
      downgrade: body.downgrade ? 1 : 0,
      waves: sizes.length,
      wave: 0,
      wave_pause_ms: (body.wave_pause_s ?? 600) * 1000,
      wave_timeout_ms: (body.wave_timeout_s ?? 3600) * 1000,
      max_failed_pct: body.max_failed_pct ?? 10,
      wave_started_at: now,
      reason: null,
      created_at: now,
      ended_at: null,
      selector: JSON.stringify(
        body.uuids ? { uuids: body.uuids.length } : body.label ? { label: body.label } : { percent: body.percent },
      ),
    };
    const boxes: RolloutBoxesTable[] = [];
    let at = 0;
    sizes.forEach((n, wave) => {
      for (const uuid of uuids.slice(at, at + n))
        boxes.push({ rollout_id: id, device_uuid: uuid, wave, state: 'pending', reason: null, updated_at: now });
      at += n;
    });
    await transact(this.db, async (trx) => {
      await trx.insertInto('rollouts').values(row).execute();
      for (let i = 0; i < boxes.length; i += 500)
        await trx
          .insertInto('rollout_boxes')
          .values(boxes.slice(i, i + 500))
          .execute();
      await this.jobs.schedule(trx, { kind: ROLLOUT_JOB, ref: id, runAt: now });
    });
    return this.view(id);
  }

  /** The boxes the operator chose: a list, a label, or a share of the fleet (at random). */
  private async select(body: api.RolloutCreateBody): Promise<string[]> {
    const given = [body.uuids, body.label, body.percent].filter((x) => x !== undefined).length;
    if (given !== 1)
      throw new ApiError('INVALID_PARAMETER', 'choose the boxes with exactly one of uuids, label, percent');
    if (body.uuids) {
      const list = [...new Set(body.uuids)];
      const known = new Set<string>();
      for (let i = 0; i < list.length; i += 500) {
        for (const r of await this.db
          .selectFrom('devices')
          .select('uuid')
          .where('uuid', 'in', list.slice(i, i + 500))
          .execute())
          known.add(r.uuid);
      }
      const unknown = list.filter((u) => !known.has(u));
      if (unknown.length)
        throw new ApiError(
          'DEVICE_NOT_FOUND',
          `no device with uuid ${unknown
            .slice(0, 3)
            .map((u) => `'${u}'`)
            .join(', ')}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''}`,
        );
      return list;
    }
    if (body.label !== undefined) {
      const rows = await this.db
        .selectFrom('device_labels')
        .select('device_uuid')
        .where('label', '=', body.label)
        .orderBy('device_uuid')
        .execute();
      if (!rows.length) throw new ApiError('INVALID_PARAMETER', `no box has the label '${body.label}'`);
      return rows.map((r) => r.device_uuid);
    }
    const all = (await this.db.selectFrom('devices').select('uuid').execute()).map((r) => r.uuid);
    if (!all.length) throw new ApiError('INVALID_PARAMETER', 'no box is registered');
    for (let i = all.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [all[i], all[j]] = [all[j] ?? '', all[i] ?? ''];
    }
    return all.slice(0, Math.ceil((all.length * (body.percent ?? 100)) / 100));
  }

  async list(): Promise<api.RolloutView[]> {
    const rows = await this.db.selectFrom('rollouts').select('id').orderBy('created_at', 'desc').limit(50).execute();
    return Promise.all(rows.map((r) => this.view(r.id)));
  }

  async view(id: string): Promise<api.RolloutView> {
    const r = await this.db
      .selectFrom('rollouts as r')
      .innerJoin('releases as rel', 'rel.id', 'r.release_id')
      .selectAll('r')
      .select('rel.version')
      .where('r.id', '=', id)
      .executeTakeFirst();
    if (!r) throw new ApiError('NOT_FOUND', `no rollout with id '${id}'`);
    const counts = await this.db
      .selectFrom('rollout_boxes')
      .select(['wave', 'state'])
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('rollout_id', '=', id)
      .groupBy(['wave', 'state'])
      .execute();
    const waves: api.RolloutView['waves'] = [];
    for (let w = 0; w < r.waves; w++) waves.push({ wave: w, boxes: 0, pending: 0, sent: 0, updated: 0, failed: 0 });
    for (const c of counts) {
      const w = waves[c.wave];
      if (!w) continue;
      w[c.state] += Number(c.n);
      w.boxes += Number(c.n);
    }
    return {
      id: r.id,
      release_id: r.release_id,
      version: r.version,
      state: r.state,
      wave: r.wave,
      waves,
      created_at: Number(r.created_at),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.ended_at !== null ? { ended_at: Number(r.ended_at) } : {}),
    };
  }

  /** The operator ends a rollout: no box is sent the release any more. */
  async cancel(id: string): Promise<void> {
    const now = this.clock.now();
    const r = await this.db
      .updateTable('rollouts')
      .set({ state: 'canceled', ended_at: now, reason: 'canceled by the operator' })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    if (r.numUpdatedRows === 1n) return;
    await this.view(id);
    throw new ApiError('INVALID_PARAMETER', 'the rollout has ended already');
  }

  /**
   * A box reported (state or presence): the rollouts waiting for it look at once. The boxes that
   * reported in one turn of the event loop are looked up together (TurnBatch: one statement, not
   * one a box, when a node's whole fleet comes back at once).
   */
  nudge(uuid: string): Promise<void> {
    return this.nudges.add(uuid);
  }

  private readonly nudges = new TurnBatch<string>(async (uuids) => {
    const rows = await this.db
      .selectFrom('rollout_boxes as b')
      .innerJoin('rollouts as r', 'r.id', 'b.rollout_id')
      .select('r.id')
      .distinct()
      .where('b.device_uuid', 'in', [...new Set(uuids)])
      .where('b.state', 'in', ['pending', 'sent'])
      .where('r.state', '=', 'running')
      .execute();
    if (rows.length)
      await this.jobs.dueNow(
        this.db,
        ROLLOUT_JOB,
        rows.map((r) => r.id),
      );
  });

  handler(): JobHandler {
    return {
      kind: ROLLOUT_JOB,
      concurrency: 4,
      leaseMs: 5 * 60_000,
      run: (job) =>
        this.step(job.ref).catch((err: unknown): JobResult => {
          this.log.error({ err, rollout: job.ref }, 'rollout step failed; trying again');
          return { next: 'again', at: this.clock.now() + this.s.stepMs };
        }),
    };
  }

  private async step(id: string): Promise<JobResult> {
    const r = await this.db.selectFrom('rollouts').selectAll().where('id', '=', id).executeTakeFirst();
    if (r?.state !== 'running') return { next: 'done' };
    const release = await this.releases.get(r.release_id);
    const now = this.clock.now();
    const started = r.wave_started_at !== null && Number(r.wave_started_at) <= now;
    const boxes: BoxRow[] = await this.db
      .selectFrom('rollout_boxes as b')
      .leftJoin('devices as d', 'd.uuid', 'b.device_uuid')
      .select(['b.device_uuid', 'b.wave', 'b.state', 'b.reason', 'd.online', 'd.state as state_json', 'd.state_at'])
      .where('b.rollout_id', '=', id)
      .where('b.wave', started ? '<=' : '<', r.wave)
      .execute();
    const changes: Array<{ uuid: string; state: RolloutBoxesTable['state']; reason: string | null }> = [];
    const toSend: BoxRow[] = [];
    for (const b of boxes) {
      if (b.state !== 'pending' && b.state !== 'sent') continue;
      const s = b.state_json
        ? parseState({ uuid: b.device_uuid, state: b.state_json, state_at: b.state_at })
        : undefined;
      if (s?.version === release.version) changes.push({ uuid: b.device_uuid, state: 'updated', reason: null });
      else if (b.state === 'sent' && s?.update?.release === release.id && FAILED_OUTCOMES.has(s.update.outcome)) {
        changes.push({
          uuid: b.device_uuid,
          state: 'failed',
          reason: `${s.update.outcome}: ${s.update.reason ?? ''}`.slice(0, 500),
        });
      } else if (b.state === 'pending' && b.online === 1) toSend.push(b);
    }
    for (let i = 0; i < toSend.length; i += this.s.sendConcurrency) {
      const acks = await Promise.all(
        toSend.slice(i, i + this.s.sendConcurrency).map((b) => this.sendTo(b.device_uuid, release, r.downgrade === 1)),
      );
      toSend.slice(i, i + this.s.sendConcurrency).forEach((b, k) => {
        const ack = acks[k];
        if (!ack) return;
        if (ack.ok) changes.push({ uuid: b.device_uuid, state: 'sent', reason: null });
        else if (ack.reason === 'invalid')
          changes.push({ uuid: b.device_uuid, state: 'failed', reason: `refused: ${ack.message ?? ''}`.slice(0, 500) });
      });
    }
    // The wave under way: sent boxes past the wave's time count as failed; offline ones wait.
    const timedOut = started && now >= Number(r.wave_started_at) + Number(r.wave_timeout_ms);
    const after = new Map(boxes.map((b) => [b.device_uuid, b.state]));
    for (const c of changes) after.set(c.uuid, c.state);
    if (timedOut) {
      for (const b of boxes) {
        if (b.wave === r.wave && after.get(b.device_uuid) === 'sent') {
          changes.push({ uuid: b.device_uuid, state: 'failed', reason: "no update report within the wave's time" });
          after.set(b.device_uuid, 'failed');
        }
      }
    }
    await this.record(id, changes, now);
    if (!started) return { next: 'again', at: Math.min(now + this.s.stepMs, Number(r.wave_started_at)) };
    const wave = boxes.filter((b) => b.wave === r.wave).map((b) => after.get(b.device_uuid));
    const failed = wave.filter((s) => s === 'failed').length;
    if (waveFailed(failed, wave.length, r.max_failed_pct)) {
      const reasons = changes
        .filter((c) => c.state === 'failed')
        .map((c) => c.reason)
        .slice(0, 3)
        .join('; ');
      const reason = `wave ${r.wave + 1} of ${r.waves}: ${failed} of ${wave.length} boxes failed, more than ${r.max_failed_pct}%${reasons ? ` (${reasons})` : ''}`;
      await this.end(id, 'stopped', reason, now);
      this.log.warn({ rollout: id, reason }, 'rollout stopped');
      return { next: 'done' };
    }
    const settled = wave.every((s) => s === 'updated' || s === 'failed') || (timedOut && !wave.includes('sent'));
    if (settled && r.wave + 1 < r.waves) {
      const next = now + Number(r.wave_pause_ms);
      await this.db
        .updateTable('rollouts')
        .set({ wave: r.wave + 1, wave_started_at: next })
        .where('id', '=', id)
        .where('state', '=', 'running')
        .execute();
      return { next: 'again', at: Math.min(now + this.s.stepMs, next) };
    }
    if (settled && [...after.values()].every((s) => s === 'updated' || s === 'failed')) {
      await this.end(id, 'done', null, now);
      return { next: 'done' };
    }
    return { next: 'again', at: now + this.s.stepMs };
  }

  /** The box's answer; undefined when it gave none in time (it stays pending and is asked again). */
  private async sendTo(uuid: string, release: ReleaseRow, downgrade: boolean): Promise<Ack | undefined> {
    try {
      return await this.releases.send(uuid, release, downgrade, this.s.sendTimeoutMs);
    } catch (err) {
      this.log.info({ err, uuid }, 'rollout: the box did not take the release; asking again later');
      return undefined;
    }
  }

  private async record(
    id: string,
    changes: ReadonlyArray<{ uuid: string; state: RolloutBoxesTable['state']; reason: string | null }>,
    now: number,
  ): Promise<void> {
    if (!changes.length) return;
    await transact(this.db, async (trx) => {
      for (const c of changes) {
        await trx
          .updateTable('rollout_boxes')
          .set({ state: c.state, reason: c.reason, updated_at: now })
          .where('rollout_id', '=', id)
          .where('device_uuid', '=', c.uuid)
          .execute();
      }
    });
  }

  private async end(id: string, state: 'done' | 'stopped', reason: string | null, now: number): Promise<void> {
    await this.db
      .updateTable('rollouts')
      .set({ state, reason, ended_at: now })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .execute();
  }
}
