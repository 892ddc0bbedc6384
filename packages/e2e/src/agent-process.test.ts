// The `boxhub agent` command as a box runs it (issue: "Critical: the boxhub agent command exits
// when it loses its connection"). Each test starts the real command as a child process and
// takes the server or the network away under it. The box reaches its broker through a TCP
// proxy on loopback, so the broker can vanish (every connection reset) and come back at the
// same address without any port being released and bound again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import mqtt from 'mqtt';
import { eventually, startTestServer, type TestServer } from '@boxhub/server/testing/harness.ts';
import type { Boxhub } from '@boxhub/sdk';
import { rigSdk } from './fixtures.ts';
import { startTcpProxy, type TcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';

const bin = new URL('../../cli/bin/boxhub.mjs', import.meta.url).pathname;

interface AgentProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
  alive(): boolean;
}

function startAgent(url: string, uuid: string, secret: string): AgentProcess {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-agent-'));
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, secret, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [
      bin,
      'agent',
      '--server',
      url,
      '--device',
      uuid,
      '--secret-file',
      secretFile,
      '--printer',
      'sim:',
      '--scanner',
      'sim:',
      '--keepalive',
      '5',
      '--reconnect-max',
      '1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      done = true;
      rmSync(dir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  return { child, lines, exited, alive: () => !done };
}

async function stopAgent(a: AgentProcess): Promise<number | null> {
  if (a.alive()) a.child.kill('SIGTERM');
  return a.exited;
}

interface Setup {
  t: TestServer;
  api: Boxhub;
  apiKey: string;
  proxy: TcpProxy;
  uuid: string;
  secret: string;
}

async function setup(): Promise<Setup> {
  const t = await startTestServer();
  const { api_key: apiKey } = await t.createApp('agent-process');
  const api = rigSdk(t.url, apiKey);
  const d = await t.registerDevice();
  await api.devices.bind({ uuid: d.uuid, name: 'room 4' });
  const broker = new URL(t.mqttUrl);
  const proxy = await startTcpProxy(broker.hostname, Number(broker.port));
  return { t, api, apiKey, proxy, uuid: d.uuid, secret: d.secret };
}

const online = (api: Boxhub, uuid: string, want = true) =>
  eventually(async () => (await api.devices.info({ uuid })).client?.online === want, `box online=${want}`, 30_000);

/** Waits until the agent has tried (and failed) to reconnect `n` more times: it is alive and retrying. */
async function retries(s: Setup, agent: AgentProcess, n: number): Promise<void> {
  const from = s.proxy.accepted;
  await eventually(() => s.proxy.accepted >= from + n || !agent.alive(), `${n} reconnection attempts`, 30_000);
  assert.ok(agent.alive(), `the agent process is still running (it logged: ${agent.lines.slice(-3).join(' | ')})`);
}

test('a server restart: the agent process keeps running, reconnects, and takes commands again', async () => {
  let s = await setup();
  const agent = startAgent(s.proxy.url, s.uuid, s.secret);
  try {
    await online(s.api, s.uuid);
    const before = (await s.api.devices.info({ uuid: s.uuid })).client!.last_connect_at!;
    // The server stops (with it the embedded broker), and only then does the box lose the
    // broker: on the external engines its last will then reaches no server node at all.
    const { dataDir, pgSchema } = s.t;
    await s.t.close({ keepData: true });
    s.proxy.down(true);
    await retries(s, agent, 3);
    const t2 = await startTestServer({ reuse: { dataDir, pgSchema } });
    const api = rigSdk(t2.url, s.apiKey);
    s = { ...s, t: t2, api };
    // The restarted server knows the box is gone (embedded: its broker starts empty; external:
    // the will the broker retained) before the box is back, not only after.
    assert.equal(
      (await api.devices.info({ uuid: s.uuid })).client!.online,
      false,
      'a box cut off during the restart is offline',
    );
    const broker = new URL(t2.mqttUrl);
    s.proxy.retarget(broker.hostname, Number(broker.port));
    s.proxy.down(false);
    await eventually(
      async () => {
        const c = (await api.devices.info({ uuid: s.uuid })).client!;
        return c.online && c.last_connect_at! > before;
      },
      'the box back online on a new connection',
      30_000,
    );
    await api.control.buzz({ client_uuid: s.uuid, buzz: [10] }); // throws unless the box answered (code 0)
    assert.ok(
      agent.lines.some((l) => l.includes('disconnected')),
      'the outage was logged',
    );
  } finally {
    assert.equal(await stopAgent(agent), 0, 'SIGTERM ends the agent with status 0');
    await s.proxy.close();
    await s.t.close();
    rmSync(s.t.dataDir, { recursive: true, force: true });
  }
});

test('a broker that is down when the agent starts: it keeps trying until the broker is there', async () => {
  const s = await setup();
  s.proxy.down(true);
  const agent = startAgent(s.proxy.url, s.uuid, s.secret);
  try {
    await retries(s, agent, 3);
    s.proxy.down(false);
    await online(s.api, s.uuid);
  } finally {
    await stopAgent(agent);
    await s.proxy.close();
    await s.t.close();
  }
});

test('a network cut and a session takeover: the agent reconnects after each', async () => {
  const s = await setup();
  const agent = startAgent(s.proxy.url, s.uuid, s.secret);
  try {
    await online(s.api, s.uuid);
    const before = s.proxy.accepted;
    s.proxy.cut();
    await eventually(() => s.proxy.connections >= 1 && s.proxy.accepted > before, 'reconnected after the cut', 30_000);
    await online(s.api, s.uuid);

    // Another client logs in with the box's own identity: the broker closes the agent's
    // session ([MQTT-3.1.4-2]). The intruder leaves; the agent must come back.
    const afterCut = s.proxy.accepted;
    const intruder = await mqtt.connectAsync(s.proxy.url, {
      clientId: s.uuid,
      username: s.uuid,
      password: s.secret,
      protocolVersion: 4,
      reconnectPeriod: 0,
      clean: true,
    });
    await intruder.endAsync();
    await eventually(() => s.proxy.accepted >= afterCut + 2, 'the agent reconnected after the takeover', 30_000);
    assert.ok(agent.alive());
    await online(s.api, s.uuid);
    await s.api.control.buzz({ client_uuid: s.uuid, buzz: [10] }); // throws unless the box answered (code 0)
  } finally {
    await stopAgent(agent);
    await s.proxy.close();
    await s.t.close();
  }
});

test('credentials the broker refuses: the agent exits with status 3 and says why', async () => {
  const s = await setup();
  const agent = startAgent(s.proxy.url, s.uuid, 'not-the-secret');
  try {
    const code = await agent.exited;
    assert.equal(code, 3);
    assert.ok(
      agent.lines.some((l) => /refused this box's credentials/.test(l)),
      agent.lines.join('\n'),
    );
  } finally {
    await stopAgent(agent);
    await s.proxy.close();
    await s.t.close();
  }
});
