// The workload: everything at once on every box (docs/chaos.md, "Workload"). Each box has a
// scan worker (plain, continuous, encrypted and recognition scans with direct transfer, some
// stopped early; every few scans the box is unbound and bound to the other application, while
// idle or in the middle of a continuous scan) and a
// print worker (strict prints, some cancelled, control commands between them). Choices come
// from the seed; refusals (a box offline, no paper yet, a node away) are recorded, not errors.
import { PDFDocument } from 'pdf-lib';
import { errorCatalog } from '@boxhub/protocol';
import { BoxhubError, generateKeyPair } from '@boxhub/sdk';
import { appOf, type Deployment, type Box } from './deployment.ts';
import type { Rng } from './rng.ts';

/** 30002: the device is not (or no longer) bound to the asking application (docs/errors.md). */
const DEVICE_NOT_FOUND = errorCatalog.DEVICE_NOT_FOUND.code;
const SERVICE_UNAVAILABLE = errorCatalog.SERVICE_UNAVAILABLE.code;

export type ScanFlavor = 'plain' | 'continuous' | 'encrypted' | 'recognition' | 'stopped';
export type PrintFlavor = 'strict' | 'cancelled';

export interface TaskRecord {
  uuid: string;
  kind: 'scan' | 'print';
  flavor: ScanFlavor | PrintFlavor;
  box: number;
  app: number;
  createdAt: number;
  /** The recognition task a scan feeds (recognition flavor). */
  recognition?: string;
  /** Sides the document takes (print). */
  sides?: number;
  /** The application stopped it (scan/stop): the item in hand is not recorded (docs/scanning.md). */
  stopped?: boolean;
}

/** An application unbound a box (docs/tasks.md, "Ownership ends with the binding"). */
export interface UnbindRecord {
  box: number;
  /** The application that unbound it, and the one that bound it next (-1: none could). */
  app: number;
  next: number;
  /** When the unbind was asked and when it was answered (Unix ms). */
  from: number;
  to: number;
}

export interface WorkloadStats {
  tasks: TaskRecord[];
  recognitions: Array<{ uuid: string; box: number; path: string }>;
  /** Calls refused or failed, by kind: normal under faults, reported for information. */
  refusals: Map<string, number>;
  controls: number;
  binds: number;
  stops: number;
  cancels: number;
  unbinds: UnbindRecord[];
  /** What the next application saw of the last one's tasks: it must see nothing. */
  leaks: Array<{ box: number; app: number; task: string; at: number; what: string }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pdf(pages: number): Promise<Buffer> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++)
    d.addPage([595.28, 841.89]).drawText(`chaos page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save());
}

export async function runWorkload(dep: Deployment, rng: Rng, untilMs: number): Promise<WorkloadStats> {
  const stats: WorkloadStats = {
    tasks: [],
    recognitions: [],
    refusals: new Map(),
    controls: 0,
    binds: 0,
    stops: 0,
    cancels: 0,
    unbinds: [],
    leaks: [],
  };
  const refused = (what: string, e: unknown) => {
    const why =
      e instanceof BoxhubError
        ? e.kind === 'api'
          ? `${what} ${e.code}`
          : `${what} ${e.kind}`
        : `${what} ${(e as Error).message.slice(0, 40)}`;
    stats.refusals.set(why, (stats.refusals.get(why) ?? 0) + 1);
  };
  for (const a of dep.apps) {
    const k = await generateKeyPair();
    await a.sdk.encryption.registerKey({ public_key: k.publicKey });
  }
  const docs = await Promise.all([1, 2, 3].map(async (n) => (await pdf(n)).toString('base64')));
  const rx = dep.rx.url;
  const live = () => Date.now() < untilMs;
  /** Boxes whose last unbind got no answer: it may have been done (rebind). */
  const unbindUnsure = new Set<number>();
  const sdkOf = (b: Box) => appOf(dep.apps, b.app).sdk;

  const scanWorker = async (b: Box, r: Rng) => {
    let n = 0;
    while (live()) {
      n++;
      if (b.app < 0)
        await rebind(b, n); // a bind failed under a fault: bind it again
      else if (b.index % 5 === 2 && n % 4 === 0) await rebind(b, n); // the box is idle here
      // Every fourth scan of those boxes is a continuous one that its application unbinds in
      // the middle (below): the task must end with the binding, out of the next one's sight.
      const takeover = b.index % 5 === 2 && n % 4 === 2;
      const flavor = takeover
        ? 'continuous'
        : r.pick<ScanFlavor>(['plain', 'plain', 'continuous', 'encrypted', 'recognition', 'stopped']);
      const sdk = sdkOf(b);
      const app = b.app;
      let recognition: string | undefined;
      try {
        const options: Record<string, unknown> = { callback_url: `${rx}/a${app}/scan`, duplex: true, resolution: 100 };
        if (flavor === 'continuous') Object.assign(options, { continuous: true, continuous_wait: r.int(2, 4) });
        if (flavor === 'encrypted') options.encrypt = true;
        if (flavor === 'recognition') {
          const path = `/rec/${b.index}-${n}`; // one receiver path per recognition run
          const t = await sdk.recognition.create({ callback_url: `${rx}${path}` });
          recognition = t.uuid;
          stats.recognitions.push({ uuid: t.uuid, box: b.index, path: `${new URL(rx).pathname}${path}` });
          Object.assign(options, {
            direct_mode: 1,
            direct_addr: t.direct_addr,
            direct_page_size: 2,
            callback_url: `${rx}/a${app}/scan`,
          });
        }
        const created = await sdk.scan.create({ client_uuid: b.uuid, options });
        const uuid = created.uuid;
        if (!uuid) throw new Error('scan create gave no uuid');
        const task: TaskRecord = {
          uuid,
          kind: 'scan',
          flavor,
          box: b.index,
          app,
          createdAt: Date.now(),
          ...(recognition ? { recognition } : {}),
        };
        stats.tasks.push(task);
        const stopAt =
          Date.now() + (flavor === 'stopped' ? r.int(300, 1500) : flavor === 'continuous' ? r.int(4000, 9000) : 60_000);
        const unbindAt = takeover ? Date.now() + r.int(1500, 3500) : Infinity;
        for (;;) {
          await sleep(500);
          if (Date.now() >= unbindAt && live()) {
            // Unbound while it scans: the scan ends with the binding (2206), nothing to stop.
            await rebind(b, n, uuid);
            if (b.app !== app) break;
          }
          if (Date.now() >= stopAt || !live()) {
            task.stopped = true; // asked, whether or not the answer arrives
            // Asked again until answered (a node away): a continuous scan on a feeder that
            // refills would otherwise scan for ever.
            for (let k = 0; k < 30; k++) {
              try {
                await sdk.scan.stop({ client_uuid: b.uuid });
                stats.stops++;
                break;
              } catch (e) {
                refused('scan.stop', e);
                await sleep(1000);
              }
            }
            break;
          }
          try {
            if ((await sdk.scan.info({ client_uuid: b.uuid, scan_uuid: uuid })).finished) break;
          } catch (e) {
            refused('scan.info', e);
          }
        }
      } catch (e) {
        refused(`scan.create/${flavor}`, e);
        // No answer (a node away, a timeout): the scan may have been created all the same. A
        // continuous one would scan the refilling feeder for ever; it is found and stopped.
        // A refusal that may hide a running scan: "try again" (10503) or "a scan exists" (30204).
        if (!(e instanceof BoxhubError && e.kind === 'api') || e.code === 10503 || e.code === 30204)
          await adopt(b, flavor);
        await sleep(1000);
      }
      await sleep(r.int(200, 1500));
    }
  };

  /**
   * Unbinds the box from its application and binds it to the other one. `running`: the scan
   * of the first application that may still run; the next application must see nothing of it
   * (scan/current), and the checker proves it ended with the binding (checker.ts, `ownership`).
   */
  const rebind = async (b: Box, n: number, running?: string) => {
    const before = b.app;
    const from = Date.now();
    if (before >= 0) {
      try {
        await sdkOf(b).devices.unbind({ uuid: b.uuid });
      } catch (e) {
        // An unbind that got no answer (its node frozen or killed under it) may have been done:
        // asked again, it answers 30002, the box not bound to this application, which is the
        // same outcome. Taken for a refusal, the box stayed this application's here while it was
        // no one's, every later unbind answered 30002 and the checker found its scan/current
        // refused at the end (seed 5, 10 minutes, 2026-11-30). So may one answered 10503 (retry):
        // once, the binding was removed and ending the box's tasks a second time, inline, met a
        // dependency down; the next unbinds answered 30002 and the checker found box 12's
        // scan/current refused (CI, 2026-12-01). The server now answers success once the
        // binding is gone (a second round that fails is left to a job: docs/tasks.md), but a
        // commit whose answer was lost with the database still leaves a 10503 unsure.
        const answered = e instanceof BoxhubError && e.kind === 'api';
        const done = answered && e.code === DEVICE_NOT_FOUND && unbindUnsure.has(b.index);
        if (!done) {
          refused('unbind', e);
          if (!answered || e.code === SERVICE_UNAVAILABLE) unbindUnsure.add(b.index);
          return;
        }
        refused('unbind (done before, unanswered)', e);
      }
      unbindUnsure.delete(b.index);
    }
    const to = Date.now();
    b.app = -1;
    // The other application: what the first leaves behind must be out of the next one's sight.
    const next = before >= 0 ? (before + 1) % dep.apps.length : n % dep.apps.length;
    for (const candidate of [next, 0]) {
      try {
        await appOf(dep.apps, candidate).sdk.devices.bind({ uuid: b.uuid, name: `box ${b.index}` });
        b.app = candidate;
        stats.binds++;
        break;
      } catch (e) {
        refused(candidate === next ? 'bind' : 'rebind', e);
      }
    }
    if (before >= 0) stats.unbinds.push({ box: b.index, app: before, next: b.app, from, to });
    if (b.app < 0) return;
    try {
      const cur = await sdkOf(b).scan.current({ client_uuid: b.uuid });
      const theirs = stats.tasks.find((t) => t.uuid === cur.scan_uuid && t.app !== b.app);
      if (cur.exist && theirs)
        stats.leaks.push({ box: b.index, app: b.app, task: theirs.uuid, at: Date.now(), what: 'scan/current' });
      if (running && before !== b.app) {
        // The first application's scan, asked by the next one, is a missing task (30002/20404).
        const info = await sdkOf(b)
          .scan.info({ client_uuid: b.uuid, scan_uuid: running })
          .then(
            () => 'answered',
            (e: unknown) => (e instanceof BoxhubError && e.kind === 'api' ? 'refused' : 'failed'),
          );
        if (info === 'answered')
          stats.leaks.push({ box: b.index, app: b.app, task: running, at: Date.now(), what: 'scan/info' });
      }
    } catch (e) {
      refused('scan.current after bind', e);
    }
  };

  /** Records and stops the scan a create that got no answer may have started. */
  const adopt = async (b: Box, flavor: ScanFlavor) => {
    // Asked again while the node or the database is away: an unknown scan left running would
    // run for as long as the feeder refills.
    let adopted: string | undefined;
    for (let k = 0; k < 30 && b.app >= 0; k++) {
      try {
        const sdk = sdkOf(b);
        if (!adopted) {
          const cur = await sdk.scan.current({ client_uuid: b.uuid });
          if (!cur.exist || !cur.scan_uuid || stats.tasks.some((t) => t.uuid === cur.scan_uuid)) return;
          adopted = cur.scan_uuid;
          stats.tasks.push({
            uuid: adopted,
            kind: 'scan',
            flavor,
            box: b.index,
            app: b.app,
            createdAt: Date.now(),
            stopped: true,
          });
        }
        await sdk.scan.stop({ client_uuid: b.uuid });
        stats.stops++;
        return;
      } catch (e) {
        refused('scan.adopt', e);
        await sleep(1000);
      }
    }
  };

  const printWorker = async (b: Box, r: Rng) => {
    while (live()) {
      const sdk = sdkOf(b);
      const app = b.app;
      if (r.next() < 0.25) {
        try {
          await sdk.control.buzz({ client_uuid: b.uuid, buzz: [20] });
          stats.controls++;
        } catch (e) {
          refused('control.buzz', e);
        }
        await sleep(r.int(300, 1500));
        continue;
      }
      const flavor: PrintFlavor = r.next() < 0.3 ? 'cancelled' : 'strict';
      const pages = r.int(1, docs.length);
      const doc = docs[pages - 1] ?? '';
      try {
        const created = await sdk.print.create({
          client_uuid: b.uuid,
          file_type: 'pdf',
          file_content: doc,
          options: { callback_url: `${rx}/a${app}/print`, strict: true, number: 1 },
        });
        const uuid = created.uuid;
        if (!uuid) throw new Error('print create gave no uuid');
        stats.tasks.push({ uuid, kind: 'print', flavor, box: b.index, app, createdAt: Date.now(), sides: pages });
        const cancelAt = flavor === 'cancelled' ? Date.now() + r.int(200, 1500) : Infinity;
        const giveUp = Date.now() + 60_000;
        for (;;) {
          await sleep(400);
          if (Date.now() >= cancelAt) {
            try {
              await sdk.print.cancel({ client_uuid: b.uuid });
              stats.cancels++;
            } catch (e) {
              refused('print.cancel', e);
            }
            break;
          }
          if (Date.now() > giveUp || !live()) break;
          try {
            if ((await sdk.print.info({ client_uuid: b.uuid, print_uuid: uuid })).finished) break;
          } catch (e) {
            refused('print.info', e);
          }
        }
      } catch (e) {
        refused('print.create', e);
        await sleep(1000);
      }
      await sleep(r.int(200, 1500));
    }
  };

  await Promise.all(dep.boxes.flatMap((b) => [scanWorker(b, rng.fork()), printWorker(b, rng.fork())]));
  return stats;
}
