// Faults on a seeded schedule, overlapping (docs/chaos.md, "Faults"). Each is caused for real:
// signals to the server and agent processes, the private PostgreSQL and Mosquitto stopped and
// started, TCP proxies that refuse (S3, one box's link to the broker), a tmpfs filled up, the
// callback receiver told to answer late or never.
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Deployment } from './deployment.ts';
import type { Rng } from './rng.ts';

export const FAULT_KINDS = [
  'node-kill',
  'node-stop',
  'broker-restart',
  'postgres-restart',
  's3-down',
  'box-net-cut',
  'box-power-cycle',
  'box-disk-full',
  'callback-slow',
  'callback-silent',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  at: number;
  until: number;
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when the box's scanner or printer wrote its log in the last `ms`: it is in a job. */
function busy(path: string, ms: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < ms;
  } catch {
    return false;
  }
}

/** Fills the disk and keeps it full (space the box frees is taken again at once, as by other
 *  writers on a real disk) until the returned function frees it. */
function keepFull(dir: string): () => void {
  const file = join(dir, 'chaos-filler');
  const fd = openSync(file, 'a');
  const block = Buffer.alloc(1 << 16, 1);
  const top = () => {
    try {
      for (;;) writeSync(fd, block);
    } catch {
      /* ENOSPC: full again */
    }
  };
  top();
  const timer = setInterval(top, 20);
  return () => {
    clearInterval(timer);
    closeSync(fd);
    rmSync(file, { force: true });
  };
}

export async function runFaults(
  dep: Deployment,
  rng: Rng,
  startMs: number,
  untilMs: number,
  keepaliveSec: number,
  log: (s: string) => void,
): Promise<FaultRecord[]> {
  const done: FaultRecord[] = [];
  const active = new Set<string>();
  const running: Promise<void>[] = [];
  const span = untilMs - startMs;
  // About one fault every 12 s, each kind at least once when the run is long enough.
  const count = Math.max(FAULT_KINDS.length, Math.round(span / 12_000));
  const plan: Array<{ at: number; kind: FaultKind }> = [];
  for (let i = 0; i < count; i++) {
    const kind = FAULT_KINDS[i] ?? rng.pick(FAULT_KINDS);
    plan.push({ at: startMs + 5_000 + Math.floor(rng.next() * Math.max(1, span - 45_000)), kind });
  }
  plan.sort((a, b) => a.at - b.at);

  const one = async (kind: FaultKind): Promise<void> => {
    const rec: FaultRecord = { kind, target: '', at: Date.now(), until: 0 };
    const hold = async (key: string, body: () => Promise<void>) => {
      if (active.has(key)) {
        rec.target = `${key} (busy: skipped)`;
        return;
      }
      active.add(key);
      try {
        await body();
      } finally {
        active.delete(key);
      }
    };
    try {
      switch (kind) {
        case 'node-kill':
        case 'node-stop': {
          const free = dep.nodes.filter((n) => !active.has(`node ${n.name}`));
          const n = free.length ? rng.pick(free) : undefined;
          if (!n) {
            rec.target = 'no node free';
            break;
          }
          rec.target = `node ${n.name}`;
          await hold(rec.target, async () => {
            if (kind === 'node-kill') {
              n.proc.kill('SIGKILL');
              await n.proc.exited;
              await sleep(rng.int(2000, 6000));
              await dep.startNode(n);
            } else {
              // Longer than the box keepalive (1.5 × keepalive is when the broker gives up).
              n.proc.child.kill('SIGSTOP');
              await sleep(keepaliveSec * 1000 * 2 + rng.int(0, 3000));
              n.proc.child.kill('SIGCONT');
            }
          });
          break;
        }
        case 'broker-restart':
          rec.target = 'mosquitto';
          await hold('broker', () => dep.broker.restart(rng.int(1000, 4000)));
          break;
        case 'postgres-restart':
          rec.target = 'postgresql';
          await hold('pg', () => dep.pg.restart(rng.int(1000, 4000)));
          break;
        case 's3-down':
          rec.target = 's3';
          await hold('s3', async () => {
            dep.s3proxy.down(true);
            await sleep(30_000);
            dep.s3proxy.down(false);
          });
          break;
        case 'box-net-cut': {
          const b = rng.pick(dep.boxes);
          rec.target = `box ${b.index}`;
          await hold(`net ${b.index}`, async () => {
            b.proxy.down(true);
            await sleep(rng.int(4000, 15000));
            b.proxy.down(false);
          });
          break;
        }
        case 'box-power-cycle': {
          // In the middle of a job: a box whose scanner or printer is working now, if any.
          const working = dep.boxes.filter((x) => busy(x.scannerLog, 1500) || busy(x.printerLog, 1500));
          const b = rng.pick(working.length ? working : dep.boxes);
          rec.target = `box ${b.index}`;
          await hold(`power ${b.index}`, async () => {
            b.proc.kill('SIGKILL');
            await b.proc.exited;
            await sleep(rng.int(500, 3000));
            dep.startAgent(b); // the same disk
          });
          break;
        }
        case 'box-disk-full': {
          const b = dep.boxes.find((x) => x.smallDisk);
          if (!b) {
            rec.target = 'no small disk (not root)';
            break;
          }
          rec.target = `box ${b.index}`;
          await hold('disk', async () => {
            const free = keepFull(b.stateDir);
            await sleep(rng.int(8000, 20000));
            free();
          });
          break;
        }
        case 'callback-slow':
        case 'callback-silent':
          rec.target = 'receiver';
          await hold('receiver', async () => {
            dep.rx.answer(kind === 'callback-slow' ? 'slow' : 'silent');
            await sleep(rng.int(10_000, 20_000));
            dep.rx.answer(200);
          });
          break;
      }
    } catch (e) {
      rec.error = (e as Error).message;
    }
    rec.until = Date.now();
    log(
      `fault ${kind} ${rec.target} ${((rec.until - rec.at) / 1000).toFixed(1)} s${rec.error ? ` ERROR ${rec.error}` : ''}`,
    );
    done.push(rec);
  };

  for (const p of plan) {
    const wait = p.at - Date.now();
    if (wait > 0) await sleep(wait);
    if (Date.now() > untilMs) break;
    running.push(one(p.kind));
  }
  await Promise.all(running);
  return done;
}
