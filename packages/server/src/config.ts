// Configuration from the environment, with every default in one place and validated at start
// (docs/configuration.md lists each variable). Nothing else in the server reads process.env.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { S3Target } from './storage/s3-client.ts';
import { parseTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { MAX_URL_CHARS } from '@boxhub/protocol';
import { DIRECT_PATH, directAddressChars } from './modules/recognition/direct-address.ts';

export interface Config {
  host: string;
  port: number;
  /** Base URL clients use to reach this server; put in links the server hands out. */
  publicUrl: string | undefined;
  dataDir: string;
  /** postgres://… switches to PostgreSQL; otherwise SQLite at <dataDir>/boxhub.sqlite. */
  databaseUrl: string | undefined;
  /** BOXHUB_DATABASE_SCHEMA: the PostgreSQL schema to work in (created if missing); default the user's search_path. */
  databaseSchema: string | undefined;
  /** mqtt://user:pass@host:port of an external broker; unset = aedes in this process. */
  mqttUrl: string | undefined;
  /** Shared-subscription group of this deployment's nodes on an external broker. */
  mqttShareGroup: string;
  mqttHost: string;
  mqttPort: number;
  /** Identifies this server node on the box link (acks are addressed to it). */
  nodeId: string;
  /** How long a control command may wait for the box's acknowledgement. */
  commandTimeoutMs: number;
  /** Largest JSON body accepted, bytes. */
  bodyLimit: number;
  allowPrivateNetworks: boolean;
  logLevel: string;
  /** Callback delivery (docs/api.md, "Limits"; docs/callbacks.md): time the receiver has to answer 200. */
  callbackTimeoutMs: number;
  /** Delay before each retry, counted from the previous failure; its length is the retry count. */
  callbackRetryDelaysMs: number[];
  /** How often a node looks for due jobs it was not woken for (other nodes, restarts). */
  jobPollMs: number;
  /** Deliveries in flight at once per node. */
  callbackConcurrency: number;
  /** Deliveries of one application in flight at once per node (fair delivery). */
  callbackPerApplication: number;
  /** How long the previous callback secret keeps signing after a rotation. */
  callbackSecretGraceMs: number;
  /** A claim lasts the timeout plus this; then a row claimed by a node that died is retried. */
  callbackClaimMarginMs: number;
  /** Completed callbacks (and their attempts) are deleted this long after completion; 0 keeps them. */
  callbackRetentionMs: number;
  /** Scan and print tasks are destroyed this long after creation (docs/api.md, "Limits": about 24 hours). */
  taskTtlMs: number;
  /** How long a temp_download_url is valid (docs/api.md, "Limits": 1 hour). */
  downloadUrlTtlMs: number;
  /** How long a box's upload URL (one scan item) is valid. */
  uploadUrlTtlMs: number;
  /** Largest object a box may upload (one scan item). */
  blobMaxBytes: number;
  /** HMAC key of the local store's signed URLs (BOXHUB_BLOB_SECRET); undefined = kept in the data dir. */
  blobSecret: Buffer | undefined;
  /** Largest body of POST /api/print/create (the file may come inline, in Base64). */
  printBodyLimit: number;
  /** Largest print file, bytes. */
  printMaxFileBytes: number;
  /** How long fetching a print file_url may take. */
  printFetchTimeoutMs: number;
  /** How long a cancelled strict print's print.finished waits for the printer's count. */
  printCountWaitMs: number;
  /** Device events: how long a change must hold before it is reported. */
  deviceEventSettleMs: number;
  /** Time between steps of a running rollout (docs/updates.md, "Rollouts"). */
  rolloutStepMs: number;
  /** Largest page image a direct transfer may carry to a recognition address. */
  directMaxPageBytes: number;
  /** A scan that ended without scan.end at its recognition address: wait this long, then 1005. */
  recognitionEndGraceMs: number;
  /** Engine threads for recognition on this node (default: the cores). */
  recognitionWorkers: number | undefined;
  /** Node-wide bound on document and image work (work-gate.ts): running at once, requests waiting. */
  work: { slots: number; queue: number };
  /** S3-compatible object storage for blobs (BOXHUB_S3_*); undefined = local files in the data dir. */
  s3: S3Config | undefined;
  /** BOXHUB_TRUST_PROXY: which proxies' X-Forwarded-* to believe (http/trust-proxy.ts). */
  trustProxy: TrustProxy;
  /** API rate limits (http/rate-limits.ts, docs/configuration.md); `max` 0 turns one off. */
  rateLimits: RateLimits;
  /** Largest MQTT packet the embedded broker reads; a larger one closes the connection. */
  mqttMaxPacketBytes: number;
  /** MQTT connection attempts per client address on the embedded broker. */
  mqttConnectLimit: Limit;
  /** Embedded broker: box logins checked at once and taken per second (0: no limit), burst; how
   *  long and how many logins past those may wait their turn. */
  mqttAdmission: { concurrency: number; rate: number; burst: number; maxLagMs: number; waitMs: number; queue: number };
  /** BOXHUB_METRICS_TOKEN: /metrics then wants it as a bearer token. */
  metricsToken: string | undefined;
  /** BOXHUB_METRICS_PORT: /metrics on a listener of its own (and not on the API's). */
  metricsPort: number | undefined;
  metricsHost: string;
  /** BOXHUB_OPERATOR_TOKEN: enables the operator API (/api/operator/…) with this bearer token. */
  operatorToken: string | undefined;
  /** Encrypts secrets the server must keep readable (callback signing secrets). */
  secretKey: SecretKeySource;
}

/** The S3 store's target, from BOXHUB_S3_*; its secretAccessKey is not enumerable, so
 *  JSON.stringify and util.inspect of the config leave it out. */
export type S3Config = S3Target;

/** At most `max` events per `windowMs`; max 0 = no limit. */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface RateLimits {
  /** Every /api request, per client address, before authentication. */
  address: Limit;
  /** Every authenticated /api request, per application (per node). */
  app: Limit;
  /** Refused API keys per client address; beyond it every request from there waits (per node). */
  authFailures: Limit;
  /** get_uuid lookups that find no device of the caller, per application (all nodes: database). */
  getUuidMisses: Limit;
}

/** BOXHUB_SECRET_KEY (base64 of 32 bytes) or a key file, made on first start when absent. */
export type SecretKeySource = { kind: 'env'; key: Buffer } | { kind: 'file'; path: string; explicit: boolean };

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function url(env: NodeJS.ProcessEnv, name: string, schemes: string[]): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL: '${raw}'`);
  }
  if (!schemes.includes(u.protocol))
    throw new ConfigError(`${name} must use ${schemes.join(' or ')}, got '${u.protocol}'`);
  return raw;
}

/**
 * The recognition addresses ess/create hands out are {public URL}/direct/{token} and must keep
 * to the URL rule of every direct_addr (at most 200 characters, @boxhub/protocol url-length.ts),
 * or scan create refuses them. Without BOXHUB_PUBLIC_URL the base is http://HOST:PORT (the
 * longest port assumed: PORT 0 is chosen at start).
 */
function checkDirectAddresses(publicUrl: string | undefined, host: string): void {
  const base = publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:65535`;
  const chars = directAddressChars(base);
  if (chars <= MAX_URL_CHARS) return;
  const over = chars - MAX_URL_CHARS;
  throw new ConfigError(
    publicUrl
      ? `BOXHUB_PUBLIC_URL is too long: a recognition task's direct_addr (BOXHUB_PUBLIC_URL${DIRECT_PATH}{43-character token}) would be ${chars} characters, over the ${MAX_URL_CHARS} a direct_addr may have; shorten BOXHUB_PUBLIC_URL by ${over} characters or more`
      : `HOST is too long for the service's own addresses: a recognition task's direct_addr (http://HOST:PORT${DIRECT_PATH}{token}) would be ${chars} characters, over ${MAX_URL_CHARS}; set BOXHUB_PUBLIC_URL to a shorter URL of this service`,
  );
}

function intList(env: NodeJS.ProcessEnv, name: string, def: number[], min: number, max: number): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const parts = raw.split(',').map((x) => x.trim());
  if (parts.length > 20 || parts.some((x) => !/^\d+$/.test(x) || Number(x) < min || Number(x) > max)) {
    throw new ConfigError(
      `${name} must be a comma-separated list of at most 20 whole numbers between ${min} and ${max}, got '${raw}'`,
    );
  }
  return parts.map(Number);
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `N` or `N/PERIOD` (PERIOD like 500ms, 10s, 1m, 1h): at most N per period; 0 switches it off. */
export function limit(env: NodeJS.ProcessEnv, name: string, def: Limit): Limit {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return def;
  const m = /^(\d{1,9})(?:\/(\d{1,7})(ms|s|m|h))?$/.exec(raw);
  if (!m)
    throw new ConfigError(
      `${name} must be N or N/PERIOD (e.g. 600/1m, 20/10s; units ms, s, m, h; 0 turns it off), got '${raw}'`,
    );
  const windowMs = m[2] ? Number(m[2]) * UNITS[m[3]!]! : def.windowMs;
  if (windowMs < 100 || windowMs > 86_400_000)
    throw new ConfigError(`${name}: the period must be between 100ms and 24h, got '${raw}'`);
  return { max: Number(m[1]), windowMs };
}

function trustProxy(raw: string | undefined): TrustProxy {
  const t = parseTrustProxy(raw);
  if (typeof t === 'string') throw new ConfigError(t);
  return t;
}

function token(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 24 || /\s/.test(raw))
    throw new ConfigError(`${name} must be at least 24 characters without spaces (e.g. openssl rand -base64 32)`);
  return raw;
}

function secretKey(env: NodeJS.ProcessEnv, dataDir: string): SecretKeySource {
  const raw = env.BOXHUB_SECRET_KEY;
  if (raw) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32 || key.toString('base64').replace(/=+$/, '') !== raw.trim().replace(/=+$/, '')) {
      throw new ConfigError('BOXHUB_SECRET_KEY must be 32 random bytes in base64 (openssl rand -base64 32)');
    }
    return { kind: 'env', key };
  }
  const file = env.BOXHUB_SECRET_KEY_FILE;
  return file
    ? { kind: 'file', path: resolve(file), explicit: true }
    : { kind: 'file', path: resolve(dataDir, 'secret.key'), explicit: false };
}

function schemaName(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw))
    throw new ConfigError(`BOXHUB_DATABASE_SCHEMA must be a lower-case SQL name (a-z, 0-9, _), got '${raw}'`);
  return raw;
}

function shareGroup(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'boxhub';
  // [MQTT-4.8.2-2] a ShareName must not contain "/", "+" or "#".
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw))
    throw new ConfigError(`BOXHUB_MQTT_SHARE_GROUP must be 1-64 characters of A-Z a-z 0-9 _ . -, got '${raw}'`);
  return raw;
}

/** A key given as hex or base64 of at least 32 bytes. */
function secretBytes(env: NodeJS.ProcessEnv, name: string): Buffer | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  const b = /^[0-9a-fA-F]+$/.test(raw) && raw.length % 2 === 0 ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (b.length < 32) throw new ConfigError(`${name} must be at least 32 bytes, as hex or base64`);
  return b;
}

/** S3's largest single PUT: every blob is stored by one (presigned or server-side) PUT. */
const S3_MAX_PUT_BYTES = 5 * 1024 ** 3;
const S3_VARS = [
  'BOXHUB_S3_ENDPOINT',
  'BOXHUB_S3_REGION',
  'BOXHUB_S3_BUCKET',
  'BOXHUB_S3_ACCESS_KEY',
  'BOXHUB_S3_SECRET_KEY',
  'BOXHUB_S3_PATH_STYLE',
];

/** The S3 blob store's settings: all of them once BOXHUB_S3_BUCKET is set, none otherwise. */
function s3(env: NodeJS.ProcessEnv, blobMaxBytes: number): S3Config | undefined {
  const bucket = env.BOXHUB_S3_BUCKET ?? '';
  if (bucket === '') {
    const stray = S3_VARS.find((v) => (env[v] ?? '') !== '');
    if (stray)
      throw new ConfigError(
        `${stray} is set but BOXHUB_S3_BUCKET is not: set the bucket to store blobs in S3, or unset ${stray}`,
      );
    return undefined;
  }
  // AWS "Bucket naming rules" (general purpose buckets).
  if (
    !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) ||
    bucket.includes('..') ||
    /^\d+\.\d+\.\d+\.\d+$/.test(bucket)
  ) {
    throw new ConfigError(
      `BOXHUB_S3_BUCKET must be a bucket name of 3-63 characters a-z 0-9 . - that starts and ends with a letter or digit, got '${bucket}'`,
    );
  }
  const region = env.BOXHUB_S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,32}$/.test(region))
    throw new ConfigError(`BOXHUB_S3_REGION must be a region name such as eu-west-1 (a-z 0-9 -), got '${region}'`);
  let endpoint = `https://s3.${region}.amazonaws.com`;
  if (env.BOXHUB_S3_ENDPOINT) {
    const raw = url(env, 'BOXHUB_S3_ENDPOINT', ['http:', 'https:']) as string;
    const u = new URL(raw);
    if (u.username || u.password)
      throw new ConfigError(
        'BOXHUB_S3_ENDPOINT must not carry credentials: give them as BOXHUB_S3_ACCESS_KEY and BOXHUB_S3_SECRET_KEY',
      );
    if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
      throw new ConfigError(
        `BOXHUB_S3_ENDPOINT must be a scheme, host and port only (like https://s3.example.com:9000), got '${raw}'`,
      );
    }
    endpoint = u.origin;
  }
  const accessKeyId = env.BOXHUB_S3_ACCESS_KEY ?? '';
  const secretAccessKey = env.BOXHUB_S3_SECRET_KEY ?? '';
  // Printable ASCII without spaces; the key id also names the credential scope, split at "/".
  if (!/^[\x21-\x2e\x30-\x7e]{1,128}$/.test(accessKeyId))
    throw new ConfigError(
      'BOXHUB_S3_ACCESS_KEY must be set with BOXHUB_S3_BUCKET: 1-128 printable characters, no spaces or "/"',
    );
  if (!/^[\x21-\x7e]{1,256}$/.test(secretAccessKey))
    throw new ConfigError(
      'BOXHUB_S3_SECRET_KEY must be set with BOXHUB_S3_BUCKET: 1-256 printable characters, no spaces',
    );
  const ps = env.BOXHUB_S3_PATH_STYLE ?? '';
  if (!['', '0', '1'].includes(ps)) throw new ConfigError(`BOXHUB_S3_PATH_STYLE must be 1 or 0, got '${ps}'`);
  if (blobMaxBytes > S3_MAX_PUT_BYTES) {
    throw new ConfigError(
      `BOXHUB_BLOB_MAX_BYTES can be at most ${S3_MAX_PUT_BYTES} (5 GiB, S3's largest single PUT) when blobs are in S3, got ${blobMaxBytes}`,
    );
  }
  const cfg = {
    endpoint,
    region,
    bucket,
    accessKeyId,
    pathStyle: ps === '' ? env.BOXHUB_S3_ENDPOINT !== undefined && env.BOXHUB_S3_ENDPOINT !== '' : ps === '1',
  } as S3Config;
  Object.defineProperty(cfg, 'secretAccessKey', { value: secretAccessKey, enumerable: false });
  return cfg;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL ?? 'info';
  const dataDir = resolve(env.BOXHUB_DATA_DIR ?? './data');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const blobMaxBytes = int(env, 'BOXHUB_BLOB_MAX_BYTES', 2 * 1024 ** 3, 1024, 64 * 1024 ** 3);
  const publicUrl = url(env, 'BOXHUB_PUBLIC_URL', ['http:', 'https:']);
  checkDirectAddresses(publicUrl, env.HOST ?? '127.0.0.1');
  return {
    host: env.HOST ?? '127.0.0.1',
    port: int(env, 'PORT', 8080, 0, 65535),
    publicUrl,
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseSchema: schemaName(env.BOXHUB_DATABASE_SCHEMA),
    mqttUrl: url(env, 'MQTT_URL', ['mqtt:', 'mqtts:', 'tcp:', 'ws:', 'wss:']),
    mqttShareGroup: shareGroup(env.BOXHUB_MQTT_SHARE_GROUP),
    mqttHost: env.BOXHUB_MQTT_HOST ?? '127.0.0.1',
    // 1883 is the system Mosquitto's port on most machines; the embedded broker stays clear.
    mqttPort: int(env, 'BOXHUB_MQTT_PORT', 1884, 0, 65535),
    nodeId: env.BOXHUB_NODE_ID ?? randomBytes(6).toString('hex'),
    commandTimeoutMs: int(env, 'BOXHUB_COMMAND_TIMEOUT_MS', 5000, 100, 120000),
    bodyLimit: int(env, 'BOXHUB_BODY_LIMIT', 1024 * 1024, 1024, 256 * 1024 * 1024),
    allowPrivateNetworks: env.BOXHUB_ALLOW_PRIVATE_NETWORKS === '1',
    logLevel,
    callbackTimeoutMs: int(env, 'BOXHUB_CALLBACK_TIMEOUT_MS', 5000, 10, 120000),
    callbackRetryDelaysMs: intList(env, 'BOXHUB_CALLBACK_RETRY_DELAYS_MS', [8000, 13000, 21000], 0, 7 * 86400000),
    jobPollMs: int(env, 'BOXHUB_JOB_POLL_MS', 1000, 10, 60000),
    callbackConcurrency: int(env, 'BOXHUB_CALLBACK_CONCURRENCY', 256, 1, 10000),
    callbackPerApplication: int(env, 'BOXHUB_CALLBACK_PER_APP_CONCURRENCY', 32, 1, 10000),
    callbackSecretGraceMs: int(env, 'BOXHUB_CALLBACK_SECRET_GRACE_MS', 86400000, 0, 30 * 86400000),
    callbackClaimMarginMs: int(env, 'BOXHUB_CALLBACK_CLAIM_MARGIN_MS', 10000, 100, 600000),
    callbackRetentionMs: int(env, 'BOXHUB_CALLBACK_RETENTION_DAYS', 30, 0, 3650) * 86400000,
    taskTtlMs: int(env, 'BOXHUB_TASK_TTL_HOURS', 24, 1, 720) * 3_600_000,
    downloadUrlTtlMs: int(env, 'BOXHUB_DOWNLOAD_URL_TTL_SEC', 3600, 60, 7 * 86400) * 1000,
    uploadUrlTtlMs: int(env, 'BOXHUB_UPLOAD_URL_TTL_SEC', 900, 60, 86400) * 1000,
    blobMaxBytes,
    blobSecret: secretBytes(env, 'BOXHUB_BLOB_SECRET'),
    printBodyLimit: int(env, 'BOXHUB_PRINT_BODY_LIMIT', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    printMaxFileBytes: int(env, 'BOXHUB_PRINT_MAX_FILE_BYTES', 48 * 1024 * 1024, 1024, 768 * 1024 * 1024),
    printFetchTimeoutMs: int(env, 'BOXHUB_PRINT_FETCH_TIMEOUT_MS', 30_000, 1000, 600_000),
    printCountWaitMs: int(env, 'BOXHUB_PRINT_COUNT_WAIT_MS', 60_000, 1000, 3_600_000),
    deviceEventSettleMs: int(env, 'BOXHUB_DEVICE_EVENT_SETTLE_MS', 30_000, 0, 3_600_000),
    rolloutStepMs: int(env, 'BOXHUB_ROLLOUT_STEP_MS', 2000, 50, 600_000),
    directMaxPageBytes: int(env, 'BOXHUB_DIRECT_MAX_PAGE_BYTES', 16 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024),
    recognitionEndGraceMs: int(env, 'BOXHUB_RECOGNITION_END_GRACE_MS', 60_000, 0, 3_600_000),
    recognitionWorkers: env.BOXHUB_RECOGNITION_WORKERS ? int(env, 'BOXHUB_RECOGNITION_WORKERS', 1, 1, 64) : undefined,
    work: {
      slots: int(env, 'BOXHUB_WORK_SLOTS', Math.max(2, availableParallelism()), 1, 64),
      queue: int(env, 'BOXHUB_WORK_QUEUE', 16, 0, 10_000),
    },
    s3: s3(env, blobMaxBytes),
    trustProxy: trustProxy(env.BOXHUB_TRUST_PROXY),
    rateLimits: {
      address: limit(env, 'BOXHUB_RATE_LIMIT_ADDRESS', { max: 12_000, windowMs: 60_000 }),
      app: limit(env, 'BOXHUB_RATE_LIMIT_APP', { max: 6_000, windowMs: 60_000 }),
      authFailures: limit(env, 'BOXHUB_RATE_LIMIT_AUTH_FAILURES', { max: 30, windowMs: 300_000 }),
      getUuidMisses: limit(env, 'BOXHUB_RATE_LIMIT_GET_UUID_MISSES', { max: 30, windowMs: 600_000 }),
    },
    mqttMaxPacketBytes: int(env, 'BOXHUB_MQTT_MAX_PACKET_BYTES', 270_000, 1024, 256 * 1024 * 1024),
    mqttConnectLimit: limit(env, 'BOXHUB_MQTT_CONNECT_LIMIT', { max: 120, windowMs: 10_000 }),
    mqttAdmission: {
      concurrency: int(env, 'BOXHUB_MQTT_ADMIT_CONCURRENCY', 32, 0, 100_000),
      rate: int(env, 'BOXHUB_MQTT_ADMIT_RATE', 1000, 0, 1_000_000),
      burst: int(env, 'BOXHUB_MQTT_ADMIT_BURST', 1000, 1, 1_000_000),
      maxLagMs: int(env, 'BOXHUB_MQTT_ADMIT_MAX_LAG_MS', 50, 0, 60_000),
      waitMs: int(env, 'BOXHUB_MQTT_ADMIT_WAIT_MS', 10_000, 0, 25_000),
      queue: int(env, 'BOXHUB_MQTT_ADMIT_QUEUE', 5_000, 0, 1_000_000),
    },
    metricsToken: token(env, 'BOXHUB_METRICS_TOKEN'),
    metricsPort: env.BOXHUB_METRICS_PORT ? int(env, 'BOXHUB_METRICS_PORT', 0, 0, 65535) : undefined,
    metricsHost: env.BOXHUB_METRICS_HOST ?? '127.0.0.1',
    operatorToken: token(env, 'BOXHUB_OPERATOR_TOKEN'),
    secretKey: secretKey(env, dataDir),
  };
}
