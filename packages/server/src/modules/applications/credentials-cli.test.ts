// Credentials revoked with the CLI, a process of its own on the nodes' database (and broker):
// the same promise as credentials.test.ts (docs/configuration.md, "Credentials"), a revocation
// stops the credential at once on every node. A file of its own: each command is a whole process
// on the TypeScript sources, seconds apiece on a loaded machine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import mqtt, { type MqttClient } from 'mqtt';
import { ApiClient, engine, eventually, startTestServer, type TestServer } from '../../testing/harness.ts';

const OPERATOR = 'operator-token-0123456789abcdef';
const cli = new URL('../../../../cli/bin/boxhub.mjs', import.meta.url).pathname;

let n1: TestServer;
let n2: TestServer;
let op: ApiClient;
before(async () => {
  const env = { BOXHUB_OPERATOR_TOKEN: OPERATOR };
  n1 = await startTestServer({ env });
  n2 = await startTestServer({ env, reuse: { dataDir: n1.dataDir, pgSchema: n1.pgSchema } });
  op = new ApiClient(n1.url, OPERATOR);
});
after(async () => {
  await n2.close();
  await n1.close();
});

/** The CLI, as a separate process, on the same database (and broker) as the nodes. */
async function runCli(args: string[]): Promise<string> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    BOXHUB_DATA_DIR: n1.dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: '',
    MQTT_URL: '',
  };
  if (engine === 'external')
    Object.assign(env, {
      DATABASE_URL: process.env.BOXHUB_TEST_DATABASE_URL!,
      BOXHUB_DATABASE_SCHEMA: n1.pgSchema!,
      MQTT_URL: process.env.BOXHUB_TEST_MQTT_URL!,
    });
  return (await promisify(execFile)(process.execPath, [cli, ...args], { env })).stdout;
}

const code = async (c: ApiClient) => (await c.get('/api/client/list', { page: 1 })).code;

describe('API keys', () => {
  test('a key revoked or rotated with the CLI (another process) fails at once on every node', async () => {
    const app = await n1.createApp();
    const [key] = await n1.server.services.applications.listKeys(app.id);
    const via1 = new ApiClient(n1.url, app.api_key);
    const via2 = new ApiClient(n2.url, app.api_key);
    assert.equal(await code(via1), 0);
    assert.equal(await code(via2), 0);
    const rotated = JSON.parse(await runCli(['app', 'key', 'rotate', '--key', key!.id, '--json'])) as {
      api_key: string;
      name: string;
    };
    assert.equal(rotated.name, 'default');
    assert.equal(await code(via1), 20001);
    assert.equal(await code(via2), 20001);
    const fresh2 = new ApiClient(n2.url, rotated.api_key);
    assert.equal(await code(fresh2), 0);
    // (The CLI's own listing is admin-commands.test.ts's; a command less here keeps the file short.)
    const live = (await n1.server.services.applications.listKeys(app.id)).filter((k) => !k.revoked_at);
    assert.equal(live.length, 1);
    await runCli(['app', 'key', 'revoke', '--key', live[0]!.id]);
    assert.equal(await code(fresh2), 20001);
    assert.equal(await code(new ApiClient(n1.url, rotated.api_key)), 20001);
  });
});

describe('box secrets', () => {
  /** Logs in as a box; resolves the client, or rejects with the broker's refusal. */
  const login = (url: string, uuid: string, secret: string): Promise<MqttClient> =>
    mqtt.connectAsync(url, {
      clientId: uuid,
      username: uuid,
      password: secret,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
  test('rotated and revoked with the CLI: the old secret is refused, the open session dropped', async () => {
    const d = await n1.registerDevice();
    const box = await login(n1.mqttUrl, d.uuid, d.secret);
    const rotated = JSON.parse(await runCli(['device', 'rotate-secret', '--code', d.code, '--json'])) as {
      uuid: string;
      secret: string;
    };
    assert.equal(rotated.uuid, d.uuid);
    await assert.rejects(login(n1.mqttUrl, d.uuid, d.secret));
    await eventually(() => !box.connected, 'the open session dropped', 5000);
    const again = await login(n2.mqttUrl, d.uuid, rotated.secret);
    await runCli(['device', 'revoke', '--uuid', d.uuid]);
    await assert.rejects(
      login(n1.mqttUrl, d.uuid, rotated.secret),
      (e: Error & { code?: number }) => [4, 5].includes(e.code ?? -1),
      'revoked: no secret works',
    );
    await eventually(() => !again.connected, 'the session dropped after the revocation', 5000);
    // A rotation gives it a working secret again.
    const back = await op.post<{ secret: string }>('/api/operator/device/rotate_secret', { uuid: d.uuid });
    (await login(n1.mqttUrl, d.uuid, back.data.secret)).end(true);
  });
});
