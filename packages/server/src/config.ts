// Configuration from the environment, with every default in one place and validated at start
// (docs/configuration.md lists each variable). Nothing else in the server reads process.env.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

export interface Config {
  host: string;
  port: number;
  /** Base URL clients use to reach this server; put in links the server hands out. */
  publicUrl: string | undefined;
  dataDir: string;
  /** postgres://… switches to PostgreSQL; otherwise SQLite at <dataDir>/boxhub.sqlite. */
  databaseUrl: string | undefined;
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
  /** Callback delivery (spec "Limits"; docs/callbacks.md): time the receiver has to answer 200. */
  callbackTimeoutMs: number;
  /** Delay before each retry, counted from the previous failure; its length is the retry count. */
  callbackRetryDelaysMs: number[];
  /** How often a node looks for due callbacks it was not woken for (other nodes, restarts). */
  callbackPollMs: number;
  /** Deliveries in flight at once per node. */
  callbackConcurrency: number;
  /** How long the previous callback secret keeps signing after a rotation. */
  callbackSecretGraceMs: number;
  /** A claim lasts the timeout plus this; then a row claimed by a node that died is retried. */
  callbackClaimMarginMs: number;
  /** Completed callbacks (and their attempts) are deleted this long after completion; 0 keeps them. */
  callbackRetentionMs: number;
}

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
  try { u = new URL(raw); } catch { throw new ConfigError(`${name} is not a URL: '${raw}'`); }
  if (!schemes.includes(u.protocol)) throw new ConfigError(`${name} must use ${schemes.join(' or ')}, got '${u.protocol}'`);
  return raw;
}

function intList(env: NodeJS.ProcessEnv, name: string, def: number[], min: number, max: number): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const parts = raw.split(',').map((x) => x.trim());
  if (parts.length > 20 || parts.some((x) => !/^\d+$/.test(x) || Number(x) < min || Number(x) > max)) {
    throw new ConfigError(`${name} must be a comma-separated list of at most 20 whole numbers between ${min} and ${max}, got '${raw}'`);
  }
  return parts.map(Number);
}

function shareGroup(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'boxhub';
  // [MQTT-4.8.2-2] a ShareName must not contain "/", "+" or "#".
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw)) throw new ConfigError(`BOXHUB_MQTT_SHARE_GROUP must be 1-64 characters of A-Z a-z 0-9 _ . -, got '${raw}'`);
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  return {
    host: env.HOST ?? '127.0.0.1',
    port: int(env, 'PORT', 8080, 0, 65535),
    publicUrl: url(env, 'BOXHUB_PUBLIC_URL', ['http:', 'https:']),
    dataDir: resolve(env.BOXHUB_DATA_DIR ?? './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
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
    callbackPollMs: int(env, 'BOXHUB_CALLBACK_POLL_MS', 1000, 10, 60000),
    callbackConcurrency: int(env, 'BOXHUB_CALLBACK_CONCURRENCY', 256, 1, 10000),
    callbackSecretGraceMs: int(env, 'BOXHUB_CALLBACK_SECRET_GRACE_MS', 86400000, 0, 30 * 86400000),
    callbackClaimMarginMs: int(env, 'BOXHUB_CALLBACK_CLAIM_MARGIN_MS', 10000, 100, 600000),
    callbackRetentionMs: int(env, 'BOXHUB_CALLBACK_RETENTION_DAYS', 30, 0, 3650) * 86400000,
  };
}
