// Device events (docs/callbacks.md, "Device events"): device.online, device.offline,
// device.printer_state and device.scanner_state to the application's device callback URL,
// through the durable callback outbox (signed, retried).
//
// Damping: when the server sees a device's state (presence, or a state report) differ from what
// it last reported, it schedules one `device.event` job for that device `settleMs` later (a job
// already pending is kept, so the first change starts the window). When the job runs it compares
// the device's state *then* with the last report, topic by topic, and sends one event per topic
// that still differs, with the state as it is then; that becomes the last report, in the same
// transaction. A flap that is back to the reported state within the window sends nothing; a
// device that keeps flapping sends at most one event per topic per window; a change is never
// reported twice. The first state the server ever sees of a device is its baseline: no event.
// Every time is the server's injected clock.
import { randomUUID } from 'node:crypto';
import type { api } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { CallbackService } from '../callbacks/service.ts';
import { TurnBatch } from '../../db/turn-batch.ts';
import type { DeviceEventRepository } from './repository.ts';
import { serialise, snapshotOf, TOPICS, type Snapshot, type Topic } from './snapshot.ts';

export const DEVICE_EVENT_JOB = 'device.event';
export const DEVICE_EVENT_SWEEP_JOB = 'device.event.sweep';
/**
 * Devices a sweep job, or a batch of news, looks at: two statements, a sweep's payload about 4 KB.
 * At 500 a job's reading and comparing held the node's event loop for a noticeable part of a
 * second in the middle of a storm (bench/README.md, "reconnect-storm").
 */
const SWEEP_BATCH = 100;
export const DEFAULT_SETTLE_MS = 30_000;
/** The ref suffix of a second window opened while the first was closing. */
const AGAIN = '#again';

export interface DeviceEventDeps {
  repo: DeviceEventRepository;
  /** To check a device callback URL and to enqueue the events (the durable outbox). */
  callbacks: Pick<CallbackService, 'enqueue' | 'checkUrl'>;
  jobs: Jobs;
  clock: Clock;
  log: Logger;
  settleMs: number;
}

export class DeviceEventService {
  private readonly d: DeviceEventDeps;
  constructor(d: DeviceEventDeps) {
    this.d = d;
  }

  get settleMs(): number {
    return this.d.settleMs;
  }

  async setting(appId: string): Promise<api.DeviceCallbackSetting> {
    const url = await this.d.repo.callbackUrl(this.d.repo.db, appId);
    return { ...(url ? { callback_url: url } : {}), settle_ms: this.d.settleMs };
  }

  /** Sets (or with "" clears) the application's device callback URL. */
  async setCallbackUrl(appId: string, given: string): Promise<api.DeviceCallbackSetting> {
    const url = given.trim();
    if (url !== '') await this.d.callbacks.checkUrl(url, 'callback_url');
    await this.d.repo.setCallbackUrl(appId, url === '' ? undefined : url, this.d.clock.now());
    return this.setting(appId);
  }

  /**
   * The server has stored news of a device (its presence or a state report): if its state now
   * differs from the last report, the window starts (or is already running). The news of every
   * device in one turn of the event loop is looked at together (TurnBatch: two statements for
   * all of them, not two a device: a node's return brings a presence and a state from each box
   * within seconds). Never throws: a missed look only delays an event to the next news.
   */
  async seen(uuid: string): Promise<void> {
    try {
      await this.looks.add({ uuid, at: this.d.clock.now() });
    } catch (err) {
      this.d.log.warn({ err, uuid }, 'device event check failed');
    }
  }

  private readonly looks = new TurnBatch<{ uuid: string; at: number }>((news) => this.look(news), SWEEP_BATCH);

  /** The windows start when the news came (its time on the clock), not when the batch ran. */
  private async look(news: { uuid: string; at: number }[]): Promise<void> {
    const firstNews = new Map<string, number>();
    for (const n of news) firstNews.set(n.uuid, Math.min(n.at, firstNews.get(n.uuid) ?? n.at));
    const uuids = [...firstNews.keys()];
    const rows = await this.d.repo.devices(this.d.repo.db, uuids);
    const reported = await this.d.repo.reportedMany(this.d.repo.db, uuids);
    const differing = rows.filter((row) => differs(snapshotOf(row), reported.get(row.uuid)));
    if (differing.length === 0) return;
    await this.d.repo.db.transaction().execute(async (trx) => {
      for (const { uuid } of differing) {
        const now = firstNews.get(uuid)!;
        await this.d.jobs.schedule(
          trx,
          { kind: DEVICE_EVENT_JOB, ref: uuid, runAt: now + this.d.settleMs, payload: String(now) },
          'keep',
        );
        // A window closing right now (its job claimed) may have read the state before this news:
        // a second window makes sure the news is looked at.
        const running = await trx
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', DEVICE_EVENT_JOB)
          .where('ref', '=', uuid)
          .where('claim_token', 'is not', null)
          .executeTakeFirst();
        if (running)
          await this.d.jobs.schedule(
            trx,
            { kind: DEVICE_EVENT_JOB, ref: `${uuid}${AGAIN}`, runAt: now + this.d.settleMs, payload: String(now) },
            'keep',
          );
      }
    });
  }

  /**
   * Many devices changed at once (a node's start marks every box offline): one window for all of
   * them. A `device.event.sweep` job per SWEEP_BATCH devices comes due when their windows would
   * close; it reads them all in two statements and opens a window, due at once, for each device
   * that still differs then (sweepHandler), so the events go out when the windows close, as they
   * would one by one. A window per device, 10,000 after a node's start, came due together in the
   * middle of the fleet's return and held the node for tens of seconds (bench/README.md,
   * "reconnect-storm"); most of those boxes were back and had nothing to report.
   */
  async seenMany(uuids: readonly string[]): Promise<void> {
    const now = this.d.clock.now();
    try {
      await this.d.repo.db.transaction().execute(async (trx) => {
        for (let i = 0; i < uuids.length; i += SWEEP_BATCH) {
          const sweep: Sweep = { changedAt: now, devices: uuids.slice(i, i + SWEEP_BATCH) };
          const ref = `${now}-${i / SWEEP_BATCH}-${randomUUID()}`;
          const job = {
            kind: DEVICE_EVENT_SWEEP_JOB,
            ref,
            runAt: now + this.d.settleMs,
            payload: JSON.stringify(sweep),
          };
          await this.d.jobs.schedule(trx, job, 'keep');
        }
      });
    } catch (err) {
      this.d.log.warn({ err, devices: uuids.length }, 'device event check failed');
    }
  }

  /** The `device.event.sweep` job (seenMany): a window, due now, for each device that differs. */
  sweepHandler(): JobHandler {
    return {
      kind: DEVICE_EVENT_SWEEP_JOB,
      concurrency: 1,
      leaseMs: 60_000,
      run: async (job) => {
        const sweep = parseSweep(job.payload);
        const rows = await this.d.repo.devices(this.d.repo.db, sweep.devices);
        const reported = await this.d.repo.reportedMany(this.d.repo.db, sweep.devices);
        const now = this.d.clock.now();
        const differing = rows.filter((row) => differs(snapshotOf(row), reported.get(row.uuid)));
        return {
          next: 'done',
          effect: async (trx) => {
            for (const { uuid } of differing) {
              const window = { kind: DEVICE_EVENT_JOB, ref: uuid, runAt: now, payload: String(sweep.changedAt) };
              await this.d.jobs.schedule(trx, window, 'keep');
            }
          },
        };
      },
    };
  }

  /** The `device.event` job: the window is over; report what still differs. */
  handler(): JobHandler {
    return {
      kind: DEVICE_EVENT_JOB,
      concurrency: 16,
      leaseMs: 60_000,
      run: async (job) => ({
        next: 'done',
        effect: (trx) => this.settle(trx, job.ref.replace(AGAIN, ''), Number(job.payload) || this.d.clock.now()),
      }),
    };
  }

  private async settle(trx: Trx, uuid: string, changedAt: number): Promise<void> {
    const row = await trx.selectFrom('devices').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    if (!row) return;
    const now = this.d.clock.now();
    const snap = snapshotOf(row);
    const reported = await this.d.repo.reported(trx, uuid);
    const url = row.app_id ? await this.d.repo.callbackUrl(trx, row.app_id) : undefined;
    for (const topic of TOPICS) {
      const current = snap[topic];
      if (current === undefined) continue;
      const value = serialise(current);
      const before = reported.get(topic);
      if (before === value) continue;
      await this.d.repo.setReported(trx, uuid, topic, value, now);
      // The first state ever seen is the baseline; an unbound device's changes go nowhere.
      if (before === undefined || !url || !row.app_id) continue;
      await this.d.callbacks.enqueue(trx, {
        appId: row.app_id,
        url,
        method: 'POST',
        event: eventName(topic, snap),
        body: eventBody(topic, snap, JSON.parse(before) as unknown, uuid, now, changedAt),
      });
    }
  }
}

/** What a sweep job carries: the devices, and when they changed (a node's start). */
interface Sweep {
  changedAt: number;
  devices: string[];
}

function parseSweep(payload: string | null): Sweep {
  const v = JSON.parse(payload ?? '{}') as Partial<Sweep>;
  return { changedAt: Number(v.changedAt) || 0, devices: Array.isArray(v.devices) ? v.devices.map(String) : [] };
}

/** Whether a device's state differs, on some topic, from what was last reported of it. */
function differs(snap: Snapshot, reported: ReadonlyMap<string, string> | undefined): boolean {
  return TOPICS.some((t) => snap[t] !== undefined && reported?.get(t) !== serialise(snap[t]));
}

function eventName(topic: Topic, snap: Snapshot): string {
  if (topic === 'online') return snap.online.online ? 'device.online' : 'device.offline';
  return topic === 'printer' ? 'device.printer_state' : 'device.scanner_state';
}

function eventBody(
  topic: Topic,
  snap: Snapshot,
  previous: unknown,
  uuid: string,
  now: number,
  changedAt: number,
): Record<string, unknown> {
  const head = {
    event: eventName(topic, snap),
    client_uuid: uuid,
    occurred_at: now,
    changed_at: Math.min(changedAt, now),
  };
  if (topic === 'online') return { ...head, online: snap.online.online };
  return { ...head, state: snap[topic], previous };
}
