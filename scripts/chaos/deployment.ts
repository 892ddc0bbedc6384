// The deployment a chaos run works on, all on this machine (docs/chaos.md, "What runs"): a
// private PostgreSQL cluster, a private ACL'd Mosquitto, s3rver behind a TCP proxy (to take
// it away), two `boxhub serve` nodes behind a load balancer, and N `boxhub agent` processes,
// each reaching the broker through its own TCP proxy (to cut its network), with simulated
// printers and scanners that log what they did on the box's disk.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Boxhub } from '@boxhub/sdk';
import { startS3, type TestS3 } from '@boxhub/server/testing/s3rver.ts';
import { startTcpProxy, type TcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startBalancer, type Balancer } from './balancer.ts';
import { startBroker, type Broker } from './mosquitto.ts';
import { startPostgres, type Postgres } from './postgres.ts';
import { freePort } from './ports.ts';
import { startProc, type Proc } from './processes.ts';

const bin = new URL('../../packages/cli/bin/boxhub.mjs', import.meta.url).pathname;
// The children run on the sources too: this process's NODE_OPTIONS (scripts/chaos.mjs set
// source mode there) are inherited.
const sourceEnv = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ ...env });
const OPERATOR_TOKEN = randomBytes(24).toString('hex');

export interface Node {
  name: string;
  port: number;
  proc: Proc;
  env: Record<string, string>;
  /** Starts that failed (the node exited before it served) and were tried again. */
  startRetries: number;
}

export interface Box {
  index: number;
  uuid: string;
  secret: string;
  dir: string;
  /** The box's own disk (its state dir): journal, outbox, items. */
  stateDir: string;
  /** True when the state dir is a small tmpfs of its own (the box whose disk is filled). */
  smallDisk: boolean;
  scannerLog: string;
  printerLog: string;
  proxy: TcpProxy;
  proc: Proc;
  /** Which application it is bound to now (index into apps), or -1. */
  app: number;
}

export interface App {
  id: string;
  key: string;
  secret: string;
  sdk: Boxhub;
}

/** The application at `i` (0 or 1; a box not bound now counts as the first's). */
export function appOf(apps: readonly App[], i: number): App {
  const a = apps[Math.max(0, i)];
  if (!a) throw new Error(`no application ${i}`);
  return a;
}

export interface Deployment {
  dir: string;
  pg: Postgres;
  broker: Broker;
  s3: TestS3;
  s3proxy: TcpProxy;
  lb: Balancer;
  nodes: Node[];
  boxes: Box[];
  apps: App[];
  /** The callback receiver (its answers are flipped by the faults) and the recognition one. */
  rx: Receiver;
  startNode(n: Node): Promise<void>;
  startAgent(b: Box): void;
  close(): Promise<void>;
}

async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function deploy(dir: string, o: { agents: number; log: (s: string) => void }): Promise<Deployment> {
  mkdirSync(dir, { recursive: true });
  o.log('PostgreSQL (private cluster)…');
  const pg = await startPostgres(join(dir, 'pg'));
  o.log("Mosquitto (private, ACL'd)…");
  const broker = await startBroker(join(dir, 'mosquitto'));
  const s3 = await startS3();
  const s3url = new URL(s3.endpoint);
  const s3proxy = await startTcpProxy(s3url.hostname, Number(s3url.port));
  const lb = await startBalancer();
  const rx = await startReceiver({ slowMs: 3000 });
  const common: Record<string, string> = {
    HOST: '127.0.0.1',
    DATABASE_URL: pg.url,
    MQTT_URL: broker.url,
    BOXHUB_MQTT_SHARE_GROUP: 'chaos',
    BOXHUB_SECRET_KEY: randomBytes(32).toString('base64'),
    BOXHUB_OPERATOR_TOKEN: OPERATOR_TOKEN,
    BOXHUB_PUBLIC_URL: lb.url,
    BOXHUB_ALLOW_PRIVATE_NETWORKS: '1',
    LOG_LEVEL: 'info',
    ...s3.env,
    BOXHUB_S3_ENDPOINT: `http://127.0.0.1:${s3proxy.port}`,
    // Chaos runs for minutes, not hours: the rate limits of one application would refuse the
    // workload's own polling.
    BOXHUB_RATE_LIMIT_APP: '600000/1m',
    BOXHUB_RATE_LIMIT_ADDRESS: '600000/1m',
  };
  const launchNode = (name: string, env: Record<string, string>, prev?: Proc) =>
    startProc(
      `node ${name}`,
      process.execPath,
      [bin, 'serve'],
      { env: sourceEnv({ ...process.env, ...env }), log: join(dir, `node-${name}.log`) },
      prev,
    );
  const ready = (n: Node) =>
    until(async () => (await fetch(`http://127.0.0.1:${n.port}/healthz`)).ok, `node ${n.name}`, 90_000);
  /**
   * Starts a node as a supervisor would (docs/box-agent.service's Restart=always): a node that
   * cannot start (its database is being restarted) exits 1 with the reason, documented in
   * docs/configuration.md, "When the service cannot start"; it is started again a second later.
   * Such an exit is no crash of a running node.
   */
  const startNode = async (n: Node) => {
    for (let tries = 0; ; tries++) {
      n.proc = launchNode(n.name, n.env, n.proc);
      const proc = n.proc;
      let gone = false;
      void proc.exited.then(() => {
        gone = true;
      });
      const up = await until(
        async () => gone || (await fetch(`http://127.0.0.1:${n.port}/healthz`)).ok,
        `node ${n.name}`,
        90_000,
      ).then(() => !gone);
      if (up) return;
      n.proc.crashes.pop();
      n.startRetries++;
      if (tries > 30) throw new Error(`node ${n.name} does not start`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const nodes: Node[] = [];
  // One after the other: the first runs the migrations.
  for (const name of ['a', 'b']) {
    o.log(`server node ${name}…`);
    const port = await freePort();
    const dataDir = join(dir, `node-${name}`);
    mkdirSync(dataDir, { recursive: true });
    const env = { ...common, PORT: String(port), BOXHUB_DATA_DIR: dataDir, BOXHUB_NODE_ID: `chaos-${name}` };
    const n: Node = { name, port, env, proc: launchNode(name, env), startRetries: 0 };
    nodes.push(n);
    await ready(n);
  }
  lb.setNodes(nodes.map((n) => ({ name: n.name, port: n.port })));

  const op = new Boxhub({ baseUrl: lb.url, apiKey: OPERATOR_TOKEN });
  const apps: App[] = [];
  for (const name of ['chaos-1', 'chaos-2']) {
    const a = await op.operator.createApp({ name, ess: true });
    apps.push({
      id: a.id,
      key: a.api_key,
      secret: a.callback_secret,
      sdk: new Boxhub({ baseUrl: lb.url, apiKey: a.api_key, timeoutMs: 20_000 }),
    });
  }

  const boxes: Box[] = [];
  const launchAgent = (b: Omit<Box, 'proc'>, prev?: Proc) => {
    const args = [
      bin,
      'agent',
      '--server',
      b.proxy.url,
      '--device',
      b.uuid,
      '--secret-file',
      join(b.dir, 'secret'),
      '--printer',
      `sim:?side_ms=150&log=${b.printerLog}`,
      '--scanner',
      `sim:?paper=3&back=text&refill=2&ppm=300&log=${b.scannerLog}`,
      '--keepalive',
      '5',
      '--reconnect-max',
      '2',
      '--state-dir',
      b.stateDir,
    ];
    return startProc(
      `agent ${b.index}`,
      process.execPath,
      args,
      { env: sourceEnv(), log: join(b.dir, 'agent.log') },
      prev,
    );
  };
  const startAgent = (b: Box) => {
    b.proc = launchAgent(b, b.proc);
  };
  const brokerPort = broker.port;
  for (let i = 0; i < o.agents; i++) {
    const d = await op.operator.registerDevice({
      code: `CH${String(i).padStart(4, '0')}${randomBytes(2).toString('hex').toUpperCase()}`,
      model: 'BX-SIM',
    });
    const bdir = join(dir, `box-${i}`);
    const stateDir = join(bdir, 'disk');
    mkdirSync(stateDir, { recursive: true });
    // The last box's disk is a 32 MB tmpfs of its own: the "disk full" fault fills it.
    const smallDisk = i === o.agents - 1 && process.getuid?.() === 0;
    if (smallDisk) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', stateDir]);
    writeFileSync(join(bdir, 'secret'), d.secret, { mode: 0o600 });
    const proxy = await startTcpProxy('127.0.0.1', brokerPort);
    const app = i % 4 === 3 ? 1 : 0;
    await appOf(apps, app).sdk.devices.bind({ uuid: d.uuid, name: `box ${i}` });
    const box = {
      index: i,
      uuid: d.uuid,
      secret: d.secret,
      dir: bdir,
      stateDir,
      smallDisk,
      proxy,
      app,
      scannerLog: join(bdir, 'scanner.jsonl'),
      printerLog: join(bdir, 'printer.jsonl'),
    };
    boxes.push({ ...box, proc: launchAgent(box) });
  }
  o.log(`${o.agents} agents started; waiting for them online…`);
  await until(
    async () => {
      let on = 0;
      for (const b of boxes) if ((await appOf(apps, b.app).sdk.devices.info({ uuid: b.uuid })).client?.online) on++;
      return on === boxes.length;
    },
    'every box online',
    180_000,
  );

  return {
    dir,
    pg,
    broker,
    s3,
    s3proxy,
    lb,
    nodes,
    boxes,
    apps,
    rx,
    startNode,
    startAgent,
    async close() {
      for (const b of boxes) b.proc.kill('SIGTERM');
      await Promise.race([Promise.all(boxes.map((b) => b.proc.exited)), new Promise((r) => setTimeout(r, 15_000))]);
      for (const b of boxes) {
        b.proc.kill('SIGKILL');
        await b.proxy.close();
        if (b.smallDisk) {
          try {
            execFileSync('umount', ['-l', b.stateDir]);
          } catch {
            /* not mounted */
          }
        }
      }
      for (const n of nodes) n.proc.kill('SIGTERM');
      await Promise.race([Promise.all(nodes.map((n) => n.proc.exited)), new Promise((r) => setTimeout(r, 15_000))]);
      for (const n of nodes) n.proc.kill('SIGKILL');
      await lb.close();
      await rx.close();
      await s3proxy.close();
      await s3.close();
      broker.stop();
      pg.stop();
    },
  };
}
