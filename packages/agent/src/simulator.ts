// A virtual box: an agent with a simulated printer, scanner and buzzer, reporting made-up but
// stable network details. Used by `npm start`, the tests and the benchmarks.
import { createHash } from 'node:crypto';
import { SimPrinter } from './drivers/sim/printer.ts';
import { SimScanner } from './drivers/sim/scanner.ts';
import { SimBuzzer } from './host/buzzer.ts';
import { BoxAgent, type AgentOptions } from './system.ts';
import { tempStateDir } from './store/temp-state-dir.ts';

/**
 * Tests restart servers and brokers many times a minute; a simulated box counts a connection
 * as stable after 1 s (the agent's default is 30 s, docs/box-protocol.md "Reconnect").
 */
const SIM_STABLE_MS = 1000;

export interface SimulatedBox {
  agent: BoxAgent;
  printer: SimPrinter;
  scanner: SimScanner;
  buzzer: SimBuzzer;
  reboots: number[];
  /** Each reboot's end (the link started again, or not: the box was stopped meanwhile). */
  rebooted: Promise<void>[];
  stateDir: string;
}

export interface SimulatedBoxOptions {
  url: string;
  uuid: string;
  secret: string;
  printer?: string;
  scanner?: string;
  keepaliveSec?: number;
  /** How long a simulated reboot keeps the box away, ms. */
  rebootMs?: number;
  statusIntervalMs?: number;
  backoff?: { baseMs: number; maxMs: number; stableMs?: number };
  /** The box's disk (journal, outbox, items); a new temporary directory by default. A box
   *  started again on the same directory is the same box after a power cycle. */
  stateDir?: string;
  uploadBackoff?: { baseMs: number; maxMs: number };
  /** Scan item caps (the box's ITEM_LIMITS by default): small ones make many items from little paper. */
  itemLimits?: AgentOptions['itemLimits'];
  outboxResendMs?: number;
  /** Direct transfer's retry policy and extra trusted CAs. */
  direct?: AgentOptions['direct'];
}

function fakeMac(seed: string, prefix: string): string {
  const h = createHash('sha256').update(seed).digest();
  return [prefix, ...[...h.subarray(0, 5)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

export function createSimulatedBox(o: SimulatedBoxOptions): SimulatedBox {
  const printer = new SimPrinter(o.printer ?? 'sim:');
  const scanner = new SimScanner(o.scanner ?? 'sim:');
  const buzzer = new SimBuzzer();
  const reboots: number[] = [];
  const rebooted: Promise<void>[] = [];
  const agent = new BoxAgent({
    link: {
      url: o.url,
      uuid: o.uuid,
      secret: o.secret,
      keepaliveSec: o.keepaliveSec ?? 30,
      ...(o.backoff ? { backoff: o.backoff } : { backoff: { baseMs: 200, maxMs: 5000, stableMs: SIM_STABLE_MS } }),
    },
    printer,
    scanner,
    buzzer,
    identity: { model: 'BX-SIM', version: '1.0.0', firmware: 'sim-1' },
    stateDir: o.stateDir ?? tempStateDir(),
    ...(o.uploadBackoff ? { uploadBackoff: o.uploadBackoff } : {}),
    ...(o.itemLimits ? { itemLimits: o.itemLimits } : {}),
    ...(o.outboxResendMs ? { outboxResendMs: o.outboxResendMs } : {}),
    ...(o.direct ? { direct: o.direct } : {}),
    network: async () => ({
      mac: fakeMac(o.uuid, '02'),
      wlan_mac: fakeMac(`${o.uuid}w`, '06'),
      network_type: 'ethernet',
      local_ip: '192.0.2.10',
      gateway_ip: '192.0.2.1',
    }),
    reboot: (a) => {
      reboots.push(Date.now());
      const done = (async () => {
        await a.link.stop();
        await new Promise((r) => setTimeout(r, o.rebootMs ?? 500));
        // A box stopped while it was away stays stopped: started again, its link dialled a
        // broker that was closing, which then waited for the box's CONNACK timeout (30 s) to
        // close (the console's test, stopping its box right after a reboot).
        if (a.running) a.link.start();
      })();
      rebooted.push(done);
      return done;
    },
    ...(o.statusIntervalMs ? { statusIntervalMs: o.statusIntervalMs } : {}),
  });
  return { agent, printer, scanner, buzzer, reboots, rebooted, stateDir: agent.stateDir };
}
