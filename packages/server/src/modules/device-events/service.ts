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
import type { api } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import type { CallbackService } from '../callbacks/service.ts';
import type { DeviceRepository } from '../devices/repository.ts';
import type { DeviceEventRepository } from './repository.ts';
import { serialise, snapshotOf, TOPICS, type Snapshot, type Topic } from './snapshot.ts';

export const DEVICE_EVENT_JOB = 'device.event';
export const DEFAULT_SETTLE_MS = 30_000;
/** The ref suffix of a second window opened while the first was closing. */
const AGAIN = '#again';

export interface DeviceEventDeps {
  repo: DeviceEventRepository;
  devices: DeviceRepository;
  callbacks: CallbackService;
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
   * differs from the last report, the window starts (or is already running). Never throws: a
   * missed look only delays an event to the next news.
   */
  async seen(uuid: string): Promise<void> {
    try {
      const row = await this.d.devices.findByUuid(uuid);
      if (!row) return;
      const now = this.d.clock.now();
      const snap = snapshotOf(row);
      const reported = await this.d.repo.reported(this.d.repo.db, uuid);
      const differs = TOPICS.some((t) => snap[t] !== undefined && reported.get(t) !== serialise(snap[t]));
      if (!differs) return;
      await this.d.repo.db.transaction().execute(async (trx) => {
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
      });
    } catch (err) {
      this.d.log.warn({ err, uuid }, 'device event check failed');
    }
  }

  /**
   * Many devices changed at once (a node's start marks every box offline): a window for each,
   * without reading each device first. The job compares when it runs, so a window opened for a
   * device that did not change (or came back in time) sends nothing. In transactions of 500,
   * yielding between them: 10,000 devices one by one (three statements each) held a node's
   * start for tens of seconds (bench/README.md, "reconnect-storm").
   */
  async seenMany(uuids: readonly string[]): Promise<void> {
    const now = this.d.clock.now();
    for (let i = 0; i < uuids.length; i += 500) {
      const batch = uuids.slice(i, i + 500);
      try {
        await this.d.repo.db.transaction().execute(async (trx) => {
          for (const uuid of batch) {
            const job = { kind: DEVICE_EVENT_JOB, ref: uuid, runAt: now + this.d.settleMs, payload: String(now) };
            await this.d.jobs.schedule(trx, job, 'keep');
          }
        });
      } catch (err) {
        this.d.log.warn({ err, devices: batch.length }, 'device event check failed');
      }
      await new Promise((r) => setImmediate(r));
    }
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
