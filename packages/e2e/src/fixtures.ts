// End-to-end fixtures: a real server plus real simulated boxes on loopback.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import {
  type AgentOptions,
  BoxAgent,
  createSimulatedBox,
  SimBuzzer,
  type SimulatedBox,
  tempStateDir,
} from '@boxhub/agent';
import { Boxhub, BoxhubError } from '@boxhub/sdk';
import {
  eventually,
  startTestServer,
  type ApiClient,
  type TestServer,
  type TestServerOptions,
} from '@boxhub/server/testing/harness.ts';
import { parseState } from '@boxhub/server/modules/devices/view.ts';

export interface BoxOptions {
  printer?: string;
  scanner?: string;
  url?: string;
  keepaliveSec?: number;
  rebootMs?: number;
  connect?: boolean;
  /** The box's disk; a new one by default. Reuse one to start the same box again. */
  stateDir?: string;
  /** An already registered and bound device (a box started again). */
  device?: { uuid: string; secret: string };
  /** Scan item caps of the box (its defaults otherwise): { maxPages: 1 } makes an item of each page. */
  itemLimits?: { maxPages: number; maxBytes: number };
  /** Direct transfer's retry policy, timeout and extra trusted CA (short ones by default). */
  direct?: {
    retry?: { baseMs?: number; maxMs?: number; giveUpMs?: number };
    ca?: string;
    timeoutMs?: number;
    stopGraceMs?: number;
  };
}

export type RigBox = SimulatedBox & { uuid: string; secret: string; code: string };

export interface Rig {
  t: TestServer;
  /** The typed SDK, as the rig's application: how the tests call the API, as an application would. */
  sdk: Boxhub;
  /** The harness's raw client, for requests the SDK would never send (malformed, hostile, other
   *  credentials) and for checks of the wire envelope itself. */
  api: ApiClient;
  /** The rig's application (feedback cards allowed). */
  app: { id: string; api_key: string; callback_secret: string };
  /** Registers a box, binds it to the rig's application and connects its agent. */
  box(opts?: BoxOptions): Promise<RigBox>;
  online(uuid: string, want?: boolean): Promise<void>;
  /** Puts sheets in the box's feeder and waits until the server knows the feeder is loaded. */
  load(box: RigBox, sheets: Parameters<SimulatedBox['scanner']['load']>[0]): Promise<void>;
  close(): Promise<void>;
}

export async function startRig(o: TestServerOptions = {}): Promise<Rig> {
  const t = await startTestServer(o);
  const app = await t.createApp('rig', { ess: true });
  const { api } = app;
  const sdk = rigSdk(t.url, app.api_key);
  const boxes: SimulatedBox[] = [];
  const online = async (uuid: string, want = true) => {
    await eventually(
      async () => (await sdk.devices.info({ uuid })).client?.online === want,
      `box ${uuid} online=${want}`,
    );
  };
  return {
    t,
    sdk,
    api,
    app,
    online,
    async load(box, sheets) {
      box.scanner.load(sheets);
      await eventually(
        async () => parseState((await t.server.repos.devices.findByUuid(box.uuid))!)?.scanner.adf_loaded === true,
        'the server sees paper in the feeder',
      );
    },
    async box(b = {}) {
      let d: { uuid: string; secret: string; code?: string } | undefined = b.device;
      if (!d) {
        d = await t.registerDevice();
        await sdk.devices.bind({ uuid: d.uuid, name: 'box' });
      }
      const box = createSimulatedBox({
        url: b.url ?? t.mqttUrl,
        uuid: d.uuid,
        secret: d.secret,
        ...(b.printer ? { printer: b.printer } : {}),
        ...(b.scanner ? { scanner: b.scanner } : {}),
        keepaliveSec: b.keepaliveSec ?? 30,
        rebootMs: b.rebootMs ?? 200,
        backoff: { baseMs: 50, maxMs: 500 },
        ...(b.stateDir ? { stateDir: b.stateDir } : {}),
        ...(b.itemLimits ? { itemLimits: b.itemLimits } : {}),
        uploadBackoff: { baseMs: 50, maxMs: 500 },
        outboxResendMs: 1000,
        direct: {
          timeoutMs: 5000,
          stopGraceMs: 500,
          ...b.direct,
          retry: { baseMs: 50, maxMs: 500, giveUpMs: 5000, ...b.direct?.retry },
        },
      });
      boxes.push(box);
      if (b.connect !== false) {
        await box.agent.start();
        await online(d.uuid);
        // Online comes with the box's presence; its printer and scanner with its first state,
        // a message of its own: a test that acts at once needs both.
        const uuid = d.uuid;
        await eventually(
          async () => (await t.server.repos.devices.findByUuid(uuid))?.state_at != null,
          `box ${uuid} reported its state`,
        );
      }
      return Object.assign(box, { uuid: d.uuid, secret: d.secret, code: d.code ?? '' });
    },
    async close() {
      for (const b of boxes) await b.agent.stop();
      await t.close();
    },
  };
}

/** An SDK client for a test server's application. No retries: a test wants a failure at once,
 *  and loopback does not drop connections. */
export function rigSdk(baseUrl: string, apiKey: string): Boxhub {
  return new Boxhub({ baseUrl, apiKey, retry: { retries: 0 } });
}

/** The BoxhubError an SDK call was refused with (its envelope `code`, `msg`, `data`); fails the
 *  test when the call succeeded or failed otherwise. */
export async function refusal(call: Promise<unknown>): Promise<BoxhubError> {
  try {
    await call;
  } catch (e) {
    if (e instanceof BoxhubError && e.kind === 'api') return e;
    throw e;
  }
  throw new Error('the call succeeded; a refusal was expected');
}

const BOXHUB_BIN = new URL('../../cli/bin/boxhub.mjs', import.meta.url).pathname;

/** The real `boxhub` command as a child process against the rig's server and application, as a
 *  person or a script runs it: its exit code, stdout and stderr (a failing exit is not thrown). */
export async function runBoxhub(
  rig: Rig,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [BOXHUB_BIN, ...args], {
      env: { ...process.env, BOXHUB_URL: rig.t.url, BOXHUB_API_KEY: rig.app.api_key, ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** The real `boxhub` command started in the background, to act on it (interrupt it, release
 *  the printer) once `ready` shows on its stderr. */
export function startBoxhub(rig: Rig, args: string[], ready: RegExp) {
  const child = spawn(process.execPath, [BOXHUB_BIN, ...args], {
    env: { ...process.env, BOXHUB_URL: rig.t.url, BOXHUB_API_KEY: rig.app.api_key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  let seen: () => void = () => undefined;
  const isReady = new Promise<void>((r) => {
    seen = r;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (ready.test(stderr)) seen();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    exited,
    ready: () =>
      Promise.race([
        isReady,
        exited.then(() => {
          throw new Error(`exited before ${ready}: ${stderr}`);
        }),
      ]),
    output: () => ({ stdout, stderr }),
  };
}

/**
 * A box agent in the test's process, driving the devices the test gives it (real peers), with
 * the defaults those tests share: a disk of its own, a simulated buzzer, a fixed identity, no
 * network facts, a reboot that does nothing, its state every 200 ms. Any of them can be given.
 */
export function peerBox(o: Pick<AgentOptions, 'link' | 'printer' | 'scanner'> & Partial<AgentOptions>): BoxAgent {
  return new BoxAgent({
    ...o,
    stateDir: o.stateDir ?? tempStateDir(),
    buzzer: o.buzzer ?? new SimBuzzer(),
    identity: o.identity ?? { model: 'BX-1', version: '0.1.0', firmware: 'test' },
    network: o.network ?? (async () => ({})),
    reboot: o.reboot ?? (async () => undefined),
    statusIntervalMs: o.statusIntervalMs ?? 200,
  });
}
