// A real server for tests: HTTP on a free port, its own database and broker. On the embedded
// engines (default) that is a temp SQLite file and aedes on a free port; with
// BOXHUB_TEST_ENGINE=external it is a fresh PostgreSQL schema and the external broker
// (scripts/test.mjs, .ci/run). Every fixture closes what it opened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../config.ts';
import { startServer, type RunningServer } from '../server.ts';
import type { Clock } from '../clock.ts';
import type { Transport } from '../modules/callbacks/transport.ts';

export const engine = process.env.BOXHUB_TEST_ENGINE === 'external' ? 'external' : 'embedded';

export interface Envelope<T = unknown> {
  code: number;
  msg: string;
  data: T;
}

export class ApiClient {
  readonly base: string;
  readonly key: string | undefined;
  constructor(base: string, key?: string) {
    this.base = base;
    this.key = key;
  }

  /**
   * One request with node:http. A server may answer a body over its limit before it has read it
   * all and close the connection; the client's write then fails after the answer arrived, which
   * is no failure of the request (fetch would throw it later as an uncaught error).
   */
  raw(
    method: string,
    path: string,
    init: { body?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; text: string; json: () => Envelope }> {
    return new Promise((resolve, reject) => {
      const body =
        init.body === undefined ? undefined : Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body);
      let answered = false;
      const req = httpRequest(
        this.base + path,
        {
          method,
          headers: {
            ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
            ...(body ? { 'content-length': String(body.length) } : {}),
            ...init.headers,
          },
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) as Envelope });
          });
        },
      );
      req.on('error', (e) => {
        if (!answered) reject(e);
      });
      req.end(body);
    });
  }

  async get<T = unknown>(path: string, query: Record<string, string | number> = {}): Promise<Envelope<T>> {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const r = await this.raw('GET', qs ? `${path}?${qs}` : path);
    if (r.status !== 200) throw new Error(`HTTP ${r.status} for GET ${path}: ${r.text}`);
    return r.json() as Envelope<T>;
  }

  async post<T = unknown>(path: string, body: unknown): Promise<Envelope<T>> {
    const r = await this.raw('POST', path, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    if (r.status !== 200) throw new Error(`HTTP ${r.status} for POST ${path}: ${r.text}`);
    return r.json() as Envelope<T>;
  }
}

export interface TestServer {
  server: RunningServer;
  url: string;
  mqttUrl: string;
  /** Where this server keeps its data; pass it (and pgSchema) to start the same server again. */
  dataDir: string;
  pgSchema: string | undefined;
  /** Creates an application and returns its client and credentials. */
  createApp(
    name?: string,
    opts?: { ess?: boolean },
  ): Promise<{ id: string; api_key: string; callback_secret: string; api: ApiClient }>;
  registerDevice(code?: string, model?: string): Promise<{ uuid: string; code: string; secret: string }>;
  /** Stops the server; `keepData` leaves its data for a restart (`reuse`), which then owns it.
   *  The data dir is removed when the last server on it closes without `keepData`. */
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export interface TestServerOptions {
  clock?: Clock;
  commandTimeoutMs?: number;
  env?: Record<string, string>;
  /** Where the server logs (default: silent, or BOXHUB_TEST_LOG's level on stdout). */
  logger?: Logger;
  /** Wraps callback delivery's HTTP transport (to cause a stall a test cannot cause for real). */
  callbackTransport?: Transport;
  /** Start on an earlier server's data (a restart, after `close({ keepData: true })`): its data
   *  dir and PostgreSQL schema, which this server leaves in place when it closes. */
  reuse?: { dataDir: string; pgSchema: string | undefined };
}

/** Servers running on each data dir: two nodes may share one (`reuse` while the first runs), and
 *  a restart takes over one its predecessor kept. The dir goes when the last server on it closes
 *  without `keepData`, whichever started first (a restart's dir was left behind before). */
const runningOn = new Map<string, number>();

export async function startTestServer(o: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = o.reuse?.dataDir ?? mkdtempSync(join(tmpdir(), 'boxhub-test-'));
  const external = engine === 'external';
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    BOXHUB_MQTT_PORT: '0',
    BOXHUB_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    BOXHUB_COMMAND_TIMEOUT_MS: String(o.commandTimeoutMs ?? 3000),
    // The suite's own load makes a test server's event loop run late now and then; refusing box
    // logins for it would only slow tests down. Lag admission has tests of its own
    // (broker/admission.test.ts); a test may set it again through `env`.
    BOXHUB_MQTT_ADMIT_MAX_LAG_MS: '0',
    // Test servers share one broker: each gets its own shared-subscription group, as two
    // deployments on one broker would.
    ...(external
      ? {
          DATABASE_URL: need('BOXHUB_TEST_DATABASE_URL'),
          MQTT_URL: need('BOXHUB_TEST_MQTT_URL'),
          BOXHUB_MQTT_SHARE_GROUP: `t${randomBytes(6).toString('hex')}`,
        }
      : {}),
    ...o.env,
  };
  const pgSchema = o.reuse ? o.reuse.pgSchema : external ? testSchemaName() : undefined;
  const server = await startServer(loadConfig(env), {
    logger: o.logger ?? pino({ level: process.env.BOXHUB_TEST_LOG ?? 'silent' }),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.callbackTransport ? { callbackTransport: o.callbackTransport } : {}),
    ...(pgSchema ? { pgSchema } : {}),
  });
  runningOn.set(dataDir, (runningOn.get(dataDir) ?? 0) + 1);
  let n = 0;
  return {
    server,
    url: server.url,
    mqttUrl: server.mqttUrl,
    dataDir,
    pgSchema,
    async createApp(name = `app-${++n}`, opts = {}) {
      const a = await server.services.applications.create({ name, ess: opts.ess ?? false });
      return {
        id: a.id,
        api_key: a.api_key,
        callback_secret: a.callback_secret,
        api: new ApiClient(server.url, a.api_key),
      };
    },
    async registerDevice(code = `BX${randomBytes(5).toString('hex').toUpperCase()}`, model = 'BX-SIM') {
      const d = await server.registerDevice({ code, model });
      return { uuid: d.uuid, code: d.code, secret: d.secret };
    },
    async close(c = {}) {
      await server.close();
      const others = (runningOn.get(dataDir) ?? 1) - 1;
      if (others > 0) runningOn.set(dataDir, others);
      else runningOn.delete(dataDir);
      if (others === 0 && !c.keepData) rmSync(dataDir, { recursive: true, force: true });
      // The schema stays until the next run's start (scripts/test.mjs drops every t_* schema):
      // dropping it here races other tests' catalog introspection (Kysely's migrator lists
      // every schema's tables) and fails them with "schema … does not exist".
    },
  };
}

/** A test's PostgreSQL schema: t_<creation time, base 36>_<random>. scripts/test.mjs drops the
 *  ones older than a few hours at its start, so two runs at once do not drop each other's. */
export function testSchemaName(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} must be set for BOXHUB_TEST_ENGINE=external`);
  return v;
}

/** Polls `check` until it returns a value (not undefined/false) or the time runs out. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  // 20 ms at first, then slower up to 100 ms: a check that polls the API for a minute stays
  // well under the default per-application rate limit (6,000 a minute) and off a busy CPU.
  let pause = 20;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(100, Math.round(pause * 1.25));
  }
}
