import { ApiError, type api, type BoxState } from '@boxhub/protocol';
import { sql, type Insertable, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Database, DeviceHistoryTable } from '../../db/schema.ts';
import { TurnBatch } from '../../db/turn-batch.ts';
import { parseState } from '../devices/view.ts';
import type { DeviceService, ProvisionHook } from '../devices/service.ts';
import { timeOrderedId } from '../../db/time-ordered-id.ts';

/** Entries of a box's history kept at most (the oldest go). */
export const HISTORY_KEEP = 200;
/** A box's history is trimmed to HISTORY_KEEP once in this many entries (record()). */
export const TRIM_EVERY = 20;
/** Boxes whose entries since the last trim are counted; past it the counts start again. */
const SINCE_TRIM_MAX = 100_000;
/** Boxes trimmed by one statement: each reads its HISTORY_KEEP + TRIM_EVERY entries to rank them. */
const TRIM_BATCH = 50;

export interface FleetBox {
  uuid: string;
  code: string;
  model: string;
  online: boolean;
  /** When the server learnt the box went offline (null: online, or never connected). */
  offline_since: number | null;
  version: string | null;
  printer_trouble: string | null;
  scanner_trouble: string | null;
  labels: string[];
}

/** What is wrong with a box's printer or scanner, in a few words; null when nothing. */
export function trouble(s: BoxState | undefined): { printer: string | null; scanner: string | null } {
  if (!s) return { printer: null, scanner: null };
  const printer = !s.printer.connected
    ? null
    : s.printer.error_code !== 0
      ? `error ${s.printer.error_code}`
      : s.printer.state === 'stopped'
        ? 'stopped'
        : null;
  const scanner = !s.scanner.connected
    ? null
    : (s.scanner.error_code ?? 0) !== 0
      ? `error ${s.scanner.error_code ?? 0}`
      : s.scanner.state === 'stopped'
        ? 'stopped'
        : null;
  return { printer, scanner };
}

export class FleetService {
  private readonly db: Kysely<Database>;
  private readonly devices: DeviceService;
  private readonly clock: Clock;
  /** Per box, what its last state said about updates and errors (history entries only on change). */
  private readonly last = new Map<string, { update: string; printer: string | null; scanner: string | null }>();
  /** Per box: entries recorded since its history was last trimmed (record()). */
  private readonly sinceTrim = new Map<string, number>();
  constructor(d: { db: Kysely<Database>; devices: DeviceService; clock: Clock }) {
    this.db = d.db;
    this.devices = d.devices;
    this.clock = d.clock;
  }

  /**
   * Registers every box of the list that is not registered yet and gives each its labels.
   * Idempotent: a code registered before (an import retried after a lost answer) is not
   * registered again: it is listed as `exists`, without a secret (secrets are shown once).
   * `each` hears of every box as soon as it is registered.
   */
  async bulkRegister(
    body: api.BulkRegisterBody,
    provision?: ProvisionHook,
    each?: (e: api.BulkRegistered) => void,
  ): Promise<{ devices: api.BulkRegistered[] }> {
    const seen = new Set<string>();
    body.devices.forEach((d, i) => {
      const code = d.code.trim();
      if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(code))
        throw new ApiError(
          'INVALID_PARAMETER',
          `devices[${i}]: code '${d.code}' must be 1-64 characters of A-Z a-z 0-9 _ . : -`,
        );
      if (seen.has(code)) throw new ApiError('INVALID_PARAMETER', `devices[${i}]: code '${code}' is in the list twice`);
      seen.add(code);
    });
    const out: api.BulkRegistered[] = [];
    for (const d of body.devices) {
      const code = d.code.trim();
      let entry: (typeof out)[number];
      const existing = await this.db.selectFrom('devices').select('uuid').where('code', '=', code).executeTakeFirst();
      if (existing) {
        entry = { code, uuid: existing.uuid, status: 'exists' };
      } else {
        try {
          const r = await this.devices.register({ code, model: d.model }, provision);
          entry = { code, uuid: r.uuid, secret: r.secret, status: 'registered' };
        } catch (e) {
          // Registered meanwhile by another import of the same list: the unique code decided.
          const again = await this.db.selectFrom('devices').select('uuid').where('code', '=', code).executeTakeFirst();
          if (!again) throw e;
          entry = { code, uuid: again.uuid, status: 'exists' };
        }
      }
      await this.addLabels(entry.uuid, d.labels ?? []);
      out.push(entry);
      // As it goes: a secret is shown once, and an import that fails half-way keeps the ones made.
      each?.(entry);
    }
    return { devices: out };
  }

  async addLabels(uuid: string, labels: readonly string[]): Promise<void> {
    if (!labels.length) return;
    await this.db
      .insertInto('device_labels')
      .values([...new Set(labels)].map((label) => ({ device_uuid: uuid, label })))
      .onConflict((oc) => oc.columns(['device_uuid', 'label']).doNothing())
      .execute();
  }

  /**
   * Adds an entry to a box's history. The entries of one turn of the event loop go in with one
   * statement (TurnBatch: a node's return brings a connect entry from every box within seconds).
   */
  async record(
    uuid: string,
    what: DeviceHistoryTable['what'],
    detail: string | null,
    at = this.clock.now(),
  ): Promise<void> {
    await this.entries.add({ id: timeOrderedId(at), device_uuid: uuid, at, what, detail });
  }

  private readonly entries = new TurnBatch<Insertable<DeviceHistoryTable>>(async (rows) => {
    await this.db.insertInto('device_history').values(rows).execute();
    // Keep the newest entries only: the history is recent, not an archive. Trimmed once in
    // TRIM_EVERY entries of a box (and at its first entry since this node started: the counts
    // are this node's), not after each: a reconnect storm wrote a connect entry for every box,
    // and the trim's lookup doubled it (bench/README.md, "reconnect-storm"). So a box keeps
    // HISTORY_KEEP to HISTORY_KEEP + TRIM_EVERY entries; the history shows the newest 50.
    const due = new Set<string>();
    for (const { device_uuid: uuid } of rows) {
      const since = (this.sinceTrim.get(uuid) ?? TRIM_EVERY) + 1;
      if (since < TRIM_EVERY) {
        this.sinceTrim.set(uuid, since);
        continue;
      }
      if (this.sinceTrim.size >= SINCE_TRIM_MAX) this.sinceTrim.clear();
      this.sinceTrim.set(uuid, 0);
      due.add(uuid);
    }
    const boxes = [...due];
    for (let i = 0; i < boxes.length; i += TRIM_BATCH) await this.trim(boxes.slice(i, i + TRIM_BATCH));
  }, 500);

  /** Each box's entries past its newest HISTORY_KEEP go, for several boxes in one statement. */
  private async trim(boxes: string[]): Promise<void> {
    await sql`delete from device_history where id in (
        select id from (
          select id, row_number() over (partition by device_uuid order by id desc) as newer
          from device_history where device_uuid in (${sql.join(boxes)})
        ) as ranked where newer > ${HISTORY_KEEP})`.execute(this.db);
  }

  /** A box connected or went away (box link presence). */
  async presence(uuid: string, online: boolean): Promise<void> {
    await this.record(uuid, online ? 'connect' : 'disconnect', null);
  }

  /** A box's state was stored: an update report or a printer/scanner error that is new goes to its history. */
  async state(uuid: string, s: BoxState): Promise<void> {
    const t = trouble(s);
    const update = s.update
      ? `${s.update.outcome} ${s.update.version}${s.update.reason ? `: ${s.update.reason}` : ''}`
      : '';
    if (!this.last.has(uuid)) await this.fromHistory.add(uuid);
    const before = this.last.get(uuid) ?? { update: '', printer: null, scanner: null };
    this.last.set(uuid, { update, printer: t.printer, scanner: t.scanner });
    if (update && update !== before.update) await this.record(uuid, 'update', update);
    if (t.printer && t.printer !== before.printer) await this.record(uuid, 'error', `printer: ${t.printer}`);
    if (t.scanner && t.scanner !== before.scanner) await this.record(uuid, 'error', `scanner: ${t.scanner}`);
  }

  /**
   * After a restart of the server: each box's last update entry, so a repeated report is not
   * recorded twice; read for every box that reported in one turn at once (TurnBatch).
   */
  private readonly fromHistory = new TurnBatch<string>(async (uuids) => {
    const rows = await this.db
      .selectFrom('device_history')
      .select(['device_uuid', 'detail'])
      .where('device_uuid', 'in', [...new Set(uuids)])
      .where('what', '=', 'update')
      .orderBy('id', 'desc')
      .execute();
    const newest = new Map<string, string>();
    for (const r of rows) if (!newest.has(r.device_uuid)) newest.set(r.device_uuid, r.detail ?? '');
    for (const uuid of uuids)
      if (!this.last.has(uuid)) this.last.set(uuid, { update: newest.get(uuid) ?? '', printer: null, scanner: null });
  });

  async history(uuid: string, limit = 50): Promise<api.DeviceHistoryEntry[]> {
    const rows = await this.db
      .selectFrom('device_history')
      .select(['at', 'what', 'detail'])
      .where('device_uuid', '=', uuid)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ at: Number(r.at), what: r.what, ...(r.detail ? { detail: r.detail } : {}) }));
  }

  /** Every box with what the fleet view shows of it, optionally those with a label only. */
  async boxes(o: { label?: string | undefined } = {}): Promise<FleetBox[]> {
    let q = this.db
      .selectFrom('devices as d')
      .select(['d.uuid', 'd.code', 'd.model', 'd.online', 'd.last_disconnect_at', 'd.state', 'd.state_at']);
    if (o.label)
      q = q.where(
        'd.uuid',
        'in',
        this.db.selectFrom('device_labels').select('device_uuid').where('label', '=', o.label),
      );
    const rows = await q.orderBy('d.code').execute();
    const labels = new Map<string, string[]>();
    for (const l of await this.db
      .selectFrom('device_labels')
      .select(['device_uuid', 'label'])
      .orderBy('label')
      .execute()) {
      const list = labels.get(l.device_uuid) ?? [];
      list.push(l.label);
      labels.set(l.device_uuid, list);
    }
    return rows.map((r) => {
      const s = parseState(r);
      const t = trouble(s);
      return {
        uuid: r.uuid,
        code: r.code,
        model: r.model,
        online: r.online === 1,
        offline_since: r.online === 1 || r.last_disconnect_at === null ? null : Number(r.last_disconnect_at),
        version: s?.version ?? null,
        printer_trouble: t.printer,
        scanner_trouble: t.scanner,
        labels: labels.get(r.uuid) ?? [],
      };
    });
  }

  summary(boxes: readonly FleetBox[]): api.FleetSummary {
    const versions = new Map<string, number>();
    const labels = new Map<string, { boxes: number; online: number }>();
    for (const b of boxes) {
      versions.set(b.version ?? 'unknown', (versions.get(b.version ?? 'unknown') ?? 0) + 1);
      for (const l of b.labels) {
        const c = labels.get(l) ?? { boxes: 0, online: 0 };
        c.boxes++;
        if (b.online) c.online++;
        labels.set(l, c);
      }
    }
    const online = boxes.filter((b) => b.online).length;
    return {
      total: boxes.length,
      online,
      offline: boxes.length - online,
      printer_trouble: boxes.filter((b) => b.printer_trouble).length,
      scanner_trouble: boxes.filter((b) => b.scanner_trouble).length,
      versions: [...versions].map(([version, n]) => ({ version, boxes: n })).sort((a, b) => b.boxes - a.boxes),
      labels: [...labels].map(([label, c]) => ({ label, ...c })).sort((a, b) => a.label.localeCompare(b.label)),
    };
  }
}
