// A Mosquitto of the chaos run's own, started by scripts/ci/start-mosquitto.sh with a separate
// BOXHUB_MOSQUITTO_DIR (never the shared one other test runs use): the same ACL'd broker as the
// external-broker test pass. Restart = kill -9 and start again on the same port and dynsec file.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Broker {
  url: string;
  port: number;
  restart(downMs: number): Promise<void>;
  stop(): void;
  log: string;
}

const script = new URL('../ci/start-mosquitto.sh', import.meta.url).pathname;

/**
 * The environment without the broker another run started: `.ci/run` exports its own
 * Mosquitto's port and logins (scripts/ci/start-mosquitto.sh), and a chaos broker asked for that
 * port would find it taken.
 */
export function ownBrokerEnv(env: NodeJS.ProcessEnv, dir: string, port?: number): NodeJS.ProcessEnv {
  const own: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('BOXHUB_MOSQUITTO_') && k !== 'BOXHUB_TEST_MQTT_URL') own[k] = v;
  }
  own.BOXHUB_MOSQUITTO_DIR = dir;
  if (port) own.BOXHUB_MOSQUITTO_PORT = String(port);
  return own;
}

function start(dir: string, port?: number): Record<string, string> {
  const out = execFileSync('bash', [script], {
    env: ownBrokerEnv(process.env, dir, port),
    stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();
  const env: Record<string, string> = {};
  for (const m of out.matchAll(/^export (\w+)='([^']*)'$/gm)) if (m[1] && m[2] !== undefined) env[m[1]] = m[2];
  return env;
}

function kill(dir: string): void {
  try {
    process.kill(Number(readFileSync(join(dir, 'mosquitto.pid'), 'utf8').trim()), 'SIGKILL');
  } catch {
    /* gone */
  }
}

export async function startBroker(dir: string): Promise<Broker> {
  const env = start(dir);
  const url = env.BOXHUB_TEST_MQTT_URL;
  const port = Number(env.BOXHUB_MOSQUITTO_PORT);
  if (!url || !port) throw new Error('start-mosquitto.sh printed no broker URL');
  return {
    url,
    port,
    log: join(dir, 'mosquitto.log'),
    async restart(downMs) {
      kill(dir);
      await new Promise((r) => setTimeout(r, downMs));
      start(dir, port);
    },
    stop() {
      kill(dir);
    },
  };
}
