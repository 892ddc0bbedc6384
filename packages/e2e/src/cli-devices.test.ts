// `boxhub bind`, `boxhub unbind` and `boxhub devices` (docs/cli.md): the real commands as child
// processes against a real server, as the rig's application; what they did is checked through
// the API, and refusals give the service's code and exit 1 like every API command.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runBoxhub, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(() => rig.close());

const boxhub = (args: string[], env: Record<string, string> = {}) => runBoxhub(rig, args, env);
type Listed = {
  page: number;
  page_size: number;
  total: number;
  clients: Array<{ uuid: string; code: string; name: string; online: boolean }>;
};

test("bind a box by its label code, see it in devices, unbind it; --json documents are the API's", async () => {
  const d = await rig.t.registerDevice();
  const before = JSON.parse((await boxhub(['devices', '--json'])).stdout) as Listed;
  assert.ok(!before.clients.some((c) => c.uuid === d.uuid), 'not listed before it is bound');

  const bound = await boxhub(['bind', '--device', d.code, '--name', 'Room 12', '--remark', 'second floor', '--json']);
  assert.equal(bound.code, 0, bound.stderr);
  const { client } = JSON.parse(bound.stdout) as {
    client: { uuid: string; code: string; name: string; remark: string; online: boolean };
  };
  assert.deepEqual(
    [client.uuid, client.code, client.name, client.remark, client.online],
    [d.uuid, d.code, 'Room 12', 'second floor', false],
  );
  assert.equal(
    (await rig.sdk.devices.info({ uuid: d.uuid })).client?.name,
    'Room 12',
    'bound for the application, as the API sees it',
  );

  // Plain text: one line a box, then the page line.
  const list = await boxhub(['devices']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^${d.code}  ${d.uuid}  "Room 12"  offline  scanner none  printer none$`, 'm'));
  assert.match(list.stdout, /^page 1 of 1, \d+ bound box\(es\)\n$/m);
  const json = JSON.parse((await boxhub(['devices', '--json', '--page', '1'])).stdout) as Listed;
  assert.deepEqual(json, await rig.sdk.devices.list({ page: 1 }));
  assert.equal(json.page_size, 100);
  const past = JSON.parse((await boxhub(['devices', '--json', '--page', '2'])).stdout) as Listed;
  assert.deepEqual([past.page, past.clients.length], [2, 0]);

  // Bound already: the service's refusal, exit 1 with its code.
  const again = await boxhub(['bind', '--device', d.uuid, '--name', 'x']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^boxhub bind: error 30003: /m);

  const unbound = await boxhub(['unbind', '--device', d.code]);
  assert.equal(unbound.code, 0, unbound.stderr);
  assert.equal(unbound.stdout, `unbound: ${d.uuid}\n`);
  assert.ok(
    !(JSON.parse((await boxhub(['devices', '--json'])).stdout) as Listed).clients.some((c) => c.uuid === d.uuid),
  );
  const twice = await boxhub(['unbind', '--device', d.uuid, '--json']);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /^boxhub unbind: error 30002: /m);
});

test('exit codes: usage 2, a box of another application 1, the service unreachable 3', async () => {
  assert.equal((await boxhub(['bind', '--device', 'BX1'])).code, 2, 'no --name');
  assert.equal((await boxhub(['devices', '--page', '0'])).code, 2);
  assert.equal((await boxhub(['unbind'])).code, 2);
  // Another application's box: refused by its code, exit 1; the box stays theirs.
  const other = await rig.t.createApp('other');
  const d = await rig.t.registerDevice();
  assert.equal(
    (await boxhub(['bind', '--device', d.code, '--name', 'theirs'], { BOXHUB_API_KEY: other.api_key })).code,
    0,
  );
  const taken = await boxhub(['bind', '--device', d.code, '--name', 'mine']);
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /^boxhub bind: error 30003: /m);
  const notOurs = await boxhub(['unbind', '--device', d.uuid]);
  assert.equal(notOurs.code, 1);
  assert.match(notOurs.stderr, /^boxhub unbind: error 30002: /m);
  assert.equal(
    (await other.api.get<{ client?: { name: string } }>('/api/client/info', { uuid: d.uuid })).data.client?.name,
    'theirs',
  );
  assert.equal((await boxhub(['devices'], { BOXHUB_URL: 'http://127.0.0.1:9' })).code, 3);
});
