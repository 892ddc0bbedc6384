// The checker (docs/chaos.md, "Invariants"): reads the database, the receiver's log, the boxes'
// disks (the simulated scanners' and printers' logs), the stored files and the processes' logs,
// and reports every violation of the guarantees with the time span it concerns (to tell which
// faults it overlapped).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { appOf, type Deployment } from './deployment.ts';
import type { FaultRecord } from './faults.ts';
import type { WorkloadStats } from './workload.ts';

export const INVARIANTS = [
  'scan-pages',
  'item-numbering',
  'item-md5',
  'item-callback',
  'print-once',
  'ended-says-why',
  'callback-delivered',
  'callback-same-id',
  'callback-retry-timing',
  'device-unlocked',
  'task-not-stuck',
  'recognition-students',
  'ownership',
  'process-crash',
  'process-rss',
  'no-5xx',
  'no-unhandled',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  detail: string;
  from: number;
  to: number;
}

interface TaskRow {
  uuid: string;
  kind: string;
  device_uuid: string;
  state: string;
  error_code: number;
  error_message: string | null;
  created_at: number;
  finished_at: number | null;
  options: string;
}
interface ItemRow {
  task_uuid: string;
  item_id: number;
  pages: number;
  page_list: string;
  blob_key: string | null;
  md5: string | null;
}
interface CallbackRow {
  id: string;
  event: string;
  task_uuid: string | null;
  url: string;
  method: string;
  body: string;
  status: string;
  created_at: number;
  completed_at: number | null;
}
interface AttemptRow {
  callback_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
}

/** Every code docs/errors.md explains (its tables' first column): an ended task says why by one. */
const documented = new Set([
  0,
  ...[...readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').matchAll(/^\| (\d{4,5}) \|/gm)].map(
    (m) => Number(m[1]),
  ),
]);

/** Scan errors of a task the server ended without the box's end (docs/errors.md). */
const SERVER_ENDED = new Set([2201, 2202, 2203, 2204, 2206]);

const RETRY_DELAYS_MS = [8000, 13000, 21000];
/** Slack for timers and a loaded machine: a retry may come late, never this much early. */
const EARLY_MS = 250;
const RSS_LIMIT = { node: 1536 * 2 ** 20, agent: 768 * 2 ** 20 };

function lines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as T];
      } catch {
        return [];
      }
    });
}

export async function check(
  dep: Deployment,
  stats: WorkloadStats,
  faults: FaultRecord[],
  endedAt: number,
): Promise<Violation[]> {
  const v: Violation[] = [];
  const add = (invariant: Invariant, detail: string, from: number, to = from) =>
    v.push({ invariant, detail, from, to });
  // BIGINT (Unix ms) as numbers, as the server reads them (packages/server/src/db/connect.ts).
  const db = new pg.Client({
    connectionString: dep.pg.url,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  await db.connect();
  try {
    const tasks = (
      await db.query<TaskRow>(
        'select uuid, kind, device_uuid, state, error_code, error_message, created_at, finished_at, options from tasks',
      )
    ).rows;
    const items = (
      await db.query<ItemRow>('select task_uuid, item_id, pages, page_list, blob_key, md5 from scan_items')
    ).rows;
    const callbacks = (
      await db.query<CallbackRow>(
        'select id, event, task_uuid, url, method, body, status, created_at, completed_at from callbacks',
      )
    ).rows;
    const attempts = (
      await db.query<AttemptRow>(
        'select callback_id, attempt, started_at, duration_ms, status_code from callback_attempts order by callback_id, attempt',
      )
    ).rows;
    const byUuid = new Map(tasks.map((t) => [t.uuid, t]));
    const scanOf = new Map(
      (
        await db.query<{ task_uuid: string; scan_uuid: string | null }>('select task_uuid, scan_uuid from recognitions')
      ).rows.map((r) => [r.task_uuid, r.scan_uuid ?? '']),
    );
    const rec = new Map(stats.tasks.map((t) => [t.uuid, t]));
    const boxOf = new Map(dep.boxes.map((b) => [b.uuid, b]));
    const powerCycles = faults.filter((f) => f.kind === 'box-power-cycle' || f.kind === 'box-disk-full');
    const cycled = (t: TaskRow) => {
      const box = boxOf.get(t.device_uuid);
      return powerCycles.some(
        (f) => f.target === `box ${box?.index}` && f.at <= (t.finished_at ?? endedAt) && f.until >= t.created_at,
      );
    };
    const span = (t: TaskRow) => [t.created_at, t.finished_at ?? endedAt] as const;

    // Scans: what each scanner handed over, by task, against the items recorded.
    const produced = new Map<string, number>();
    for (const b of dep.boxes)
      for (const l of lines<{ task: string | null }>(b.scannerLog))
        if (l.task) produced.set(l.task, (produced.get(l.task) ?? 0) + 1);
    const itemsOf = new Map<string, ItemRow[]>();
    for (const i of items) itemsOf.set(i.task_uuid, [...(itemsOf.get(i.task_uuid) ?? []), i]);
    const received = new Map<string, typeof dep.rx.received>();
    for (const r of dep.rx.received) received.set(r.id, [...(received.get(r.id) ?? []), r]);
    const itemCallbacks = new Set(
      callbacks
        .filter((c) => c.event === 'scan.item_data')
        .map((c) => {
          const body = JSON.parse(c.body) as { uuid: string; item_id: number };
          return `${body.uuid}#${body.item_id}`;
        }),
    );
    const delivered = (c: CallbackRow) => (received.get(c.id) ?? []).length > 0;
    const deliveredItem = new Set(
      callbacks
        .filter((c) => c.event === 'scan.item_data' && delivered(c))
        .map((c) => {
          const body = JSON.parse(c.body) as { uuid: string; item_id: number };
          return `${body.uuid}#${body.item_id}`;
        }),
    );

    for (const t of tasks.filter((x) => x.kind === 'scan')) {
      const [from, to] = span(t);
      const its = (itemsOf.get(t.uuid) ?? []).sort((a, b) => a.item_id - b.item_id);
      const direct = (JSON.parse(t.options) as { direct_mode?: number }).direct_mode === 1;
      its.forEach((it, k) => {
        if (it.item_id !== k + 1)
          add('item-numbering', `scan ${t.uuid}: items ${its.map((x) => x.item_id).join(',')}`, from, to);
      });
      const seen = new Set<string>();
      let pages = 0;
      for (const it of its) {
        for (const p of JSON.parse(it.page_list) as Array<{ paper_number: number; front: boolean }>) {
          const key = `${p.paper_number}${p.front ? 'f' : 'b'}`;
          if (seen.has(key)) add('scan-pages', `scan ${t.uuid}: page ${key} in two items`, from, to);
          seen.add(key);
          pages++;
        }
        if (!direct) {
          const k = `${t.uuid}#${it.item_id}`;
          if (t.finished_at !== null && !deliveredItem.has(k))
            add(
              'item-callback',
              `scan ${t.uuid} item ${it.item_id}: scan.item_data ${itemCallbacks.has(k) ? 'recorded, never received' : 'never recorded'}`,
              from,
              to,
            );
        }
      }
      const made = produced.get(t.uuid) ?? 0;
      // A power cut (or a full disk) may lose the pages in hand, and a stop the item being
      // assembled or uploaded (docs/scanning.md, "Stop"); nothing may be made up or doubled.
      // The same for a scan the server ended on its own (2201-2204: stopped while the box was
      // away, lost, not acknowledged in time, expired): what the box scans after is dropped.
      const loose = cycled(t) || rec.get(t.uuid)?.stopped === true || SERVER_ENDED.has(t.error_code);
      if (!direct && (loose ? pages > made : pages !== made))
        add(
          'scan-pages',
          `scan ${t.uuid} (${rec.get(t.uuid)?.flavor ?? '?'}, end ${t.error_code}): scanner made ${made} pages, items hold ${pages}${loose ? ' (power-cycled or stopped)' : ''}`,
          from,
          to,
        );
    }

    // Stored files: each item's MD5 against the bytes in S3.
    for (const it of items) {
      if (!it.blob_key || !it.md5) continue;
      const t = byUuid.get(it.task_uuid);
      const from = t?.created_at ?? 0;
      try {
        const r = await fetch(
          `${dep.s3.endpoint}/${dep.s3.bucket}/${it.blob_key.split('/').map(encodeURIComponent).join('/')}`,
        );
        if (!r.ok) {
          add(
            'item-md5',
            `scan ${it.task_uuid} item ${it.item_id}: stored file answers ${r.status}`,
            from,
            t?.finished_at ?? endedAt,
          );
          continue;
        }
        const md5 = createHash('md5')
          .update(Buffer.from(await r.arrayBuffer()))
          .digest('hex');
        if (md5 !== it.md5)
          add(
            'item-md5',
            `scan ${it.task_uuid} item ${it.item_id}: MD5 ${it.md5} recorded, ${md5} stored`,
            from,
            t?.finished_at ?? endedAt,
          );
      } catch (e) {
        add('item-md5', `scan ${it.task_uuid} item ${it.item_id}: ${(e as Error).message}`, from);
      }
    }

    // Prints: the printer's log is the truth.
    const printed = new Map<string, { sides: number; jobs: Set<number>; completed: number }>();
    for (const b of dep.boxes) {
      const boot = new Map<number, number>();
      let incarnation = 0;
      for (const l of lines<{ event: string; task: string; job: number; sides: number; state: string }>(b.printerLog)) {
        // Job ids restart at 1 with each agent process: a 'start' of a job id seen before is a new printer.
        if (l.event === 'start') {
          if (boot.has(l.job)) {
            incarnation++;
            boot.clear();
          }
          boot.set(l.job, incarnation);
        }
        const p = printed.get(l.task) ?? { sides: 0, jobs: new Set<number>(), completed: 0 };
        if (l.event === 'start') p.jobs.add(incarnation * 100000 + l.job);
        if (l.event === 'side') p.sides++;
        if (l.event === 'end' && l.state === 'completed') p.completed++;
        printed.set(l.task, p);
      }
    }
    for (const t of tasks.filter((x) => x.kind === 'print')) {
      const p = printed.get(t.uuid);
      const want = rec.get(t.uuid)?.sides;
      if (p && (p.completed > 1 || (want !== undefined && p.sides > want)))
        add(
          'print-once',
          `print ${t.uuid}: ${p.jobs.size} printer jobs, ${p.completed} completed, ${p.sides} sides printed of ${want ?? '?'}`,
          ...span(t),
        );
    }
    for (const t of tasks) {
      if (t.finished_at !== null && !documented.has(t.error_code))
        add(
          'ended-says-why',
          `${t.kind} ${t.uuid}: ended with ${t.error_code}, a code docs/errors.md does not explain`,
          ...span(t),
        );
      // A recognition task no scan ever named, or whose scan the box refused (that scan was
      // forgotten, and the address may be used again), waits for a scan until it expires, as
      // documented (docs/tasks.md, docs/cards.md): it is not stuck.
      const unbound = t.kind === 'recognition' && !byUuid.has(scanOf.get(t.uuid) ?? '');
      if (t.finished_at === null && !unbound)
        add(
          'task-not-stuck',
          `${t.kind} ${t.uuid} (${rec.get(t.uuid)?.flavor ?? '?'}) still ${t.state} after the drain`,
          ...span(t),
        );
    }

    // Callbacks: every id delivered at least once, a duplicate the same message, retries on time.
    for (const c of callbacks) {
      const got = received.get(c.id) ?? [];
      if (got.length === 0)
        add(
          'callback-delivered',
          `${c.event} ${c.id} (${c.status}) never reached the receiver`,
          c.created_at,
          c.completed_at ?? endedAt,
        );
      if (new Set(got.map((r) => r.body)).size > 1)
        add('callback-same-id', `${c.event} ${c.id}: ${got.length} deliveries with different bodies`, c.created_at);
    }
    const byCallback = new Map<string, AttemptRow[]>();
    for (const a of attempts) byCallback.set(a.callback_id, [...(byCallback.get(a.callback_id) ?? []), a]);
    for (const [id, as] of byCallback) {
      for (const [k, cur] of as.entries()) {
        const prev = as[k - 1];
        if (!prev) continue;
        // Attempts count from 1: attempt 2 is the first retry.
        const delay = RETRY_DELAYS_MS[Math.min(cur.attempt - 1, RETRY_DELAYS_MS.length) - 1] ?? 0;
        const gap = cur.started_at - (prev.started_at + prev.duration_ms);
        if (gap < delay - EARLY_MS)
          add(
            'callback-retry-timing',
            `callback ${id}: attempt ${cur.attempt} ${gap} ms after the previous failure (the schedule says ${delay} ms)`,
            prev.started_at,
            cur.started_at,
          );
      }
    }

    // Locks: a device whose scans have all ended is free.
    for (const b of dep.boxes) {
      const open = tasks.filter((t) => t.kind === 'scan' && t.device_uuid === b.uuid && t.finished_at === null);
      if (b.app < 0) continue;
      try {
        const cur = await appOf(dep.apps, b.app).sdk.scan.current({ client_uuid: b.uuid });
        if (cur.exist && open.length === 0)
          add(
            'device-unlocked',
            `box ${b.index}: scan/current names ${cur.scan_uuid ?? '?'} though every scan of it ended`,
            endedAt,
          );
      } catch (e) {
        add('device-unlocked', `box ${b.index}: scan/current failed: ${(e as Error).message}`, endedAt);
      }
    }

    // Ownership ends with the binding (docs/tasks.md): a task of the application that unbound a
    // box ended by the time the unbind answered; its callbacks went to its own application's
    // URLs only; the next application saw nothing of it (the workload's leaks).
    for (const u of stats.unbinds) {
      const device = dep.boxes[u.box]?.uuid;
      for (const t of tasks) {
        const r = rec.get(t.uuid);
        if (t.device_uuid !== device || r?.app !== u.app || t.created_at > u.from) continue;
        if (t.finished_at !== null && t.finished_at < u.from) continue;
        // Ended after the unbind was asked: by it (UNBOUND) or by the box in the same moment.
        if (t.finished_at === null || t.finished_at > u.to)
          add(
            'ownership',
            `${t.kind} ${t.uuid} of application ${u.app} still active after it unbound box ${u.box} (ended ${t.finished_at === null ? 'never' : `${t.finished_at - u.to} ms after the unbind answered`}, code ${t.error_code})`,
            u.from,
            t.finished_at ?? endedAt,
          );
      }
    }
    for (const c of callbacks) {
      const r = c.task_uuid ? rec.get(c.task_uuid) : undefined;
      if (r && !new URL(c.url).pathname.includes(`/a${r.app}/`))
        add('ownership', `${c.event} of ${r.kind} ${r.uuid} (application ${r.app}) sent to ${c.url}`, c.created_at);
    }
    for (const l of stats.leaks)
      add('ownership', `application ${l.app} saw task ${l.task} of another on box ${l.box} (${l.what})`, l.at);
    // Recognition: each student once, the end callback last.
    for (const r of stats.recognitions) {
      const got = dep.rx.received.filter((x) => x.path === r.path);
      const first = new Map<string, (typeof got)[number]>();
      for (const g of got) if (!first.has(g.id)) first.set(g.id, g);
      const posts = [...first.values()].filter((g) => g.method === 'POST');
      const ends = [...first.values()].filter((g) => g.method === 'PUT');
      const students = posts.map((p) => JSON.stringify((JSON.parse(p.body) as { pages?: unknown }).pages ?? p.id));
      const from = posts[0]?.at ?? endedAt;
      if (new Set(students).size !== students.length)
        add('recognition-students', `recognition ${r.uuid}: a student delivered under two callback ids`, from);
      if (ends.length > 1) add('recognition-students', `recognition ${r.uuid}: ${ends.length} end callbacks`, from);
      const end = ends[0];
      if (end && posts.some((p) => p.at > end.at))
        add('recognition-students', `recognition ${r.uuid}: a student callback after the end callback`, from, end.at);
    }
  } finally {
    await db.end();
  }

  // Processes.
  const procs = [
    ...dep.nodes.map((n) => ({ kind: 'node' as const, p: n.proc })),
    ...dep.boxes.map((b) => ({ kind: 'agent' as const, p: b.proc })),
  ];
  for (const { kind, p } of procs) {
    for (const c of p.crashes)
      add('process-crash', `${p.name} exited by itself (code ${c.code}, signal ${c.signal})`, c.at);
    const top = Math.max(...p.rss);
    if (top > RSS_LIMIT[kind])
      add(
        'process-rss',
        `${p.name}: RSS reached ${(top / 2 ** 20).toFixed(0)} MiB (bound ${(RSS_LIMIT[kind] / 2 ** 20).toFixed(0)} MiB)`,
        endedAt,
      );
    for (const l of existsSync(p.log) ? readFileSync(p.log, 'utf8').split('\n') : []) {
      if (/unhandled ?rejection|uncaught ?exception|"msg":"unhandled error"/i.test(l))
        add(
          'no-unhandled',
          `${p.name}: ${l.slice(0, 200)}`,
          (JSON.parse(l.startsWith('{') ? l : '{}') as { time?: number }).time ?? endedAt,
        );
    }
  }
  for (const e of dep.lb.errors) add('no-5xx', `${e.node} answered ${e.status} to ${e.method} ${e.path}`, e.at);
  return v;
}
