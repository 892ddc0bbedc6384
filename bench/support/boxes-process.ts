// Many simulated boxes (mqtt.js agents from @boxhub/agent) in one process, forked by a bench
// with an IPC channel, so their memory and CPU are not counted as the server's.
//
// Protocol: sends { ready: true, url: '' } at start; then { id, op, ... } → { id, result | error }:
//   connect { url, boxes: [{ uuid, secret }], keepaliveSec, concurrency, noDelay, scanner?, printer? } → { connected, ms }
//   load { sheets, back } → puts `sheets` sheets in every box's feeder (sim scanner)
//   played → total buzz patterns the boxes received
//   cpu → process.cpuUsage(); cpuWithChildren → { ownMs, childrenMs } (children: tools it ran)
//   e2eKey → the first box's public key (hex), once it has one
//   mark { at } → from now on, each box's first connection is noted (Unix ms) with its busy refusals
//   recovery { at } → { times (ms after `at` of each box's first connection since mark), missing, busy }
//   close → stops every agent and exits
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSimulatedBox, type SimulatedBox } from '@boxhub/agent';
import { traceEverySecond } from './trace.ts';

type Request = { id: number; op: string; [k: string]: unknown };
if (!process.send) throw new Error('boxes-process.ts must be forked with an IPC channel');
const send = (m: unknown) => process.send!(m);
const boxes: SimulatedBox[] = [];
// Every box's state directory under one of this process's, removed when it exits: a storm's
// 10,000 boxes left 10,000 directories in /tmp a run.
const stateRoot = mkdtempSync(join(tmpdir(), 'boxhub-bench-boxes-'));
process.on('exit', () => rmSync(stateRoot, { recursive: true, force: true }));

/** Turns Nagle off on a box's TCP socket (mqtt.js opens it without noDelay). Diagnosis only. */
function setNoDelay(box: SimulatedBox): void {
  const link = box.agent.link as unknown as { client?: { stream?: { setNoDelay?: (on: boolean) => void } } };
  link.client?.stream?.setNoDelay?.(true);
}

type BackoffSettings = { baseMs: number; maxMs: number; stableMs?: number };
let marked = false;
const firstConnect = new Map<SimulatedBox, number>();
let busyRefusals = 0;
/** After the mark: sessions that ended again (a connection lost after its CONNACK), and the
 *  link's errors by message (a CONNACK that came too late shows here), to tell a slow node
 *  from a flapping one. */
let drops = 0;
const errors = new Map<string, number>();

function watch(box: SimulatedBox): void {
  box.agent.link.on('connected', () => {
    if (marked && !firstConnect.has(box)) firstConnect.set(box, Date.now());
  });
  box.agent.link.on('busy', () => {
    if (marked) busyRefusals++;
  });
  box.agent.link.on('disconnected', () => {
    if (marked && firstConnect.has(box)) drops++;
  });
  box.agent.link.on('error', (e: Error) => {
    if (!marked) return;
    const k = e.message.replace(/[0-9a-f-]{36}/g, '…').slice(0, 60);
    errors.set(k, (errors.get(k) ?? 0) + 1);
  });
}

async function connect(
  url: string,
  list: { uuid: string; secret: string }[],
  keepaliveSec: number,
  concurrency: number,
  timeoutMs: number,
  noDelay: boolean,
  devices: { scanner?: string; printer?: string } = {},
  backoff: BackoffSettings = { baseMs: 500, maxMs: 5000 },
) {
  const t0 = Date.now();
  const queue = [...list];
  // A bounded number of connects in flight: a real fleet does not all dial in the same ms.
  const one = (c: { uuid: string; secret: string }) =>
    new Promise<void>((resolve, reject) => {
      const box = createSimulatedBox({
        url,
        uuid: c.uuid,
        secret: c.secret,
        keepaliveSec,
        backoff,
        stateDir: mkdtempSync(join(stateRoot, 'box-')),
        ...(devices.scanner ? { scanner: devices.scanner } : {}),
        ...(devices.printer ? { printer: devices.printer } : {}),
      });
      boxes.push(box);
      watch(box);
      const t = setTimeout(() => reject(new Error(`box ${c.uuid} did not connect within ${timeoutMs} ms`)), timeoutMs);
      if (noDelay) box.agent.link.on('connected', () => setNoDelay(box));
      box.agent.link.once('connected', () => {
        clearTimeout(t);
        resolve();
      });
      box.agent.start();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) await one(c);
    }),
  );
  return { connected: boxes.filter((b) => b.agent.link.connected).length, ms: Date.now() - t0 }; // all boxes of this process
}

async function handle(req: Request): Promise<unknown> {
  switch (req.op) {
    case 'connect':
      return connect(
        String(req.url),
        req.boxes as { uuid: string; secret: string }[],
        Number(req.keepaliveSec ?? 60),
        Number(req.concurrency ?? 50),
        Number(req.timeoutMs ?? 30_000),
        req.noDelay === true,
        {
          ...(req.scanner ? { scanner: String(req.scanner) } : {}),
          ...(req.printer ? { printer: String(req.printer) } : {}),
        },
        ...(req.backoff ? [req.backoff as BackoffSettings] : []),
      );
    case 'mark':
      marked = true;
      firstConnect.clear();
      busyRefusals = 0;
      drops = 0;
      errors.clear();
      return boxes.length;
    case 'recovery': {
      const at = Number(req.at);
      const times = [...firstConnect.values()].map((t) => t - at).sort((a, b) => a - b);
      return {
        times,
        missing: boxes.length - times.length,
        busy: busyRefusals,
        drops,
        errors: Object.fromEntries(errors),
      };
    }
    case 'load': {
      // Sides are generated pages, or given JPEG files the sim delivers byte for byte (a bench
      // draws them once, so the boxes' CPU is not spent drawing).
      const sheets = Number(req.sheets ?? 10);
      const images = req.images as { front: string; back: string } | undefined;
      const sheet = images
        ? { front: { image: images.front }, back: { image: images.back } }
        : { front: 'text' as const, back: req.back === 'blank' ? ('blank' as const) : ('text' as const) };
      for (const b of boxes) b.scanner.load(Array.from({ length: sheets }, () => sheet));
      return sheets * boxes.length;
    }
    case 'cpu':
      return process.cpuUsage();
    case 'cpuWithChildren': {
      // This process's CPU plus that of the tools it ran and waited for (qpdf, pdftoppm):
      // cutime and cstime of /proc/self/stat, in clock ticks (100 per second on Linux).
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const u = process.cpuUsage();
      return { ownMs: (u.user + u.system) / 1000, childrenMs: (Number(f[13]) + Number(f[14])) * 10 };
    }
    case 'e2eKey': {
      const k = JSON.parse(readFileSync(`${boxes[0]!.stateDir}/e2e-key.json`, 'utf8')) as { public_key: string };
      return k.public_key;
    }
    case 'played':
      return boxes.reduce((n, b) => n + b.buzzer.played.length, 0);
    case 'close':
      await Promise.all(boxes.map((b) => b.agent.stop().catch(() => undefined)));
      setImmediate(() => process.exit(0));
      return true;
    default:
      throw new Error(`unknown op '${req.op}'`);
  }
}

// BENCH_TRACE=<file>: this process's line a second (trace.ts) with its boxes connected, to
// <file>.boxes-<pid> (diagnosis: is the load generator the limit?).
if (process.env.BENCH_TRACE) {
  traceEverySecond(`${process.env.BENCH_TRACE}.boxes-${process.pid}`, () => [
    `boxes ${boxes.length} connected ${boxes.filter((b) => b.agent.link.connected).length}`,
  ]);
}

process.on('message', (raw) => {
  const req = raw as Request;
  handle(req).then(
    (result) => send({ id: req.id, result }),
    (e: unknown) => send({ id: req.id, error: (e as Error).stack ?? String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ ready: true, url: '' });
