// docs/sdk.md shows packages/sdk/examples/*.ts exactly, and each example runs against a real
// server (with a simulated box) and prints what it should.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { promisify } from 'node:util';
import { createSimulatedBox } from '@boxhub/agent';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import { Boxhub } from '@boxhub/sdk';

const root = new URL('../../../', import.meta.url);
const examples = new URL('../examples/', import.meta.url);

/** Runs an example as its own program, on the sources (tsx), as a user would run theirs. */
async function runExample(name: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@boxhub/source', '--import', 'tsx', new URL(name, examples).pathname],
    {
      cwd: root.pathname,
      env: { ...process.env, NODE_OPTIONS: '', ...env },
      timeout: 60_000,
    },
  );
  return stdout;
}

test('docs/sdk.md shows every example as it is in packages/sdk/examples', async () => {
  const doc = await readFile(new URL('docs/sdk.md', root), 'utf8');
  const shown = [...doc.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
  assert.deepEqual(
    shown.map((m) => m[1]),
    [
      'packages/sdk/examples/quickstart.ts',
      'packages/sdk/examples/print-and-scan.ts',
      'packages/sdk/examples/receive-callbacks.ts',
    ],
  );
  for (const [, path, code] of shown) {
    assert.ok(
      code === (await readFile(new URL(path!, root), 'utf8')),
      `docs/sdk.md shows an outdated ${path}: copy the file into the page`,
    );
  }
});

test('the quick start binds the box, reads it and makes it beep, and can run again', async () => {
  const server = await startTestServer();
  const app = await server.createApp();
  const reg = await server.registerDevice();
  const box = createSimulatedBox({
    url: server.mqttUrl,
    uuid: reg.uuid,
    secret: reg.secret,
    backoff: { baseMs: 50, maxMs: 500 },
  });
  box.agent.start();
  try {
    await eventually(
      async () => (await server.server.repos.devices.findByUuid(reg.uuid))?.online === 1 || undefined,
      'the box online',
    );
    const env = { BOXHUB_URL: server.url, BOXHUB_API_KEY: app.api_key, BOXHUB_DEVICE_CODE: reg.code };
    assert.equal(await runExample('quickstart.ts', env), 'Room 4: online, printer connected\nbeeped\n');
    // A second run finds the box bound already, and carries on.
    assert.equal(await runExample('quickstart.ts', env), 'Room 4: online, printer connected\nbeeped\n');
    assert.deepEqual(box.buzzer.played, [
      { beeps: [200, 100, 200], gap: 200 },
      { beeps: [200, 100, 200], gap: 200 },
    ]);
  } finally {
    await box.agent.stop();
    await server.close();
  }
});

test('the callback receiver verifies and handles the test callback, also during a secret rotation', async () => {
  const server = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  const app = await server.createApp();
  try {
    const env = {
      BOXHUB_URL: server.url,
      BOXHUB_API_KEY: app.api_key,
      BOXHUB_CALLBACK_SECRET: app.callback_secret,
      PORT: '0',
    };
    const out = await runExample('receive-callbacks.ts', env);
    const id = /^asked for test callback (\S+)$/m.exec(out)?.[1];
    assert.ok(id, out);
    assert.match(out, new RegExp(`^test callback ${id} arrived$`, 'm'));

    const rotated = await new Boxhub({ baseUrl: server.url, apiKey: app.api_key }).callbacks.rotateSecret();
    const during = await runExample('receive-callbacks.ts', {
      ...env,
      BOXHUB_CALLBACK_SECRET: `${rotated.callback_secret},${app.callback_secret}`,
    });
    assert.match(during, /^test callback \S+ arrived$/m);
  } finally {
    await server.close();
  }
});

test('print and scan: a worksheet printed twice, a duplex stack scanned (a blank back skipped), items downloaded and checked', async () => {
  const server = await startTestServer();
  const app = await server.createApp();
  const reg = await server.registerDevice();
  const box = createSimulatedBox({
    url: server.mqttUrl,
    uuid: reg.uuid,
    secret: reg.secret,
    backoff: { baseMs: 50, maxMs: 500 },
  });
  box.agent.start();
  const dir = await mkdtemp(join(tmpdir(), 'boxhub-sdk-example-'));
  try {
    await eventually(
      async () => (await server.server.repos.devices.findByUuid(reg.uuid))?.online === 1 || undefined,
      'the box online',
    );
    const sdk = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
    await sdk.devices.bind({ uuid: reg.uuid, name: 'Room 4' });
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++)
      doc.addPage([595.28, 841.89]).drawText(`worksheet page ${i + 1}`, { x: 50, y: 700, size: 24 });
    await writeFile(join(dir, 'worksheet.pdf'), await doc.save());
    box.scanner.load([
      { front: 'text', back: 'text' },
      { front: 'text', back: 'blank' },
      { front: 'text', back: 'text' },
    ]);
    const out = await runExample('print-and-scan.ts', {
      BOXHUB_URL: server.url,
      BOXHUB_API_KEY: app.api_key,
      BOXHUB_DEVICE_UUID: reg.uuid,
      WORKSHEET: join(dir, 'worksheet.pdf'),
      OUT: join(dir, 'out'),
    });
    const lines = out.trim().split('\n');
    assert.match(lines[0]!, /^printer: boxhub Sim Inkjet, sizes .*SVC_MS_A4/);
    assert.equal(lines[1], 'printed: error_code 0, 6 sides');
    // The item rule (item_seconds 3 by default) may cut the stack in two on a slow machine:
    // however many items, they hold the 5 pages and each file is the one reported.
    const scanned = /^scanned: error_code 0, 5 pages in (\d+) item\(s\)$/.exec(lines[2]!);
    assert.ok(scanned, out);
    const n = Number(scanned[1]);
    let pages = 0;
    for (let i = 1; i <= n; i++) {
      const item = new RegExp(`^item ${i}: (\\d+) pages, (\\d+) bytes, MD5 checked$`).exec(lines[2 + i] ?? '');
      assert.ok(item, out);
      pages += Number(item[1]);
      assert.equal((await readFile(join(dir, `out/${i}.pdf`))).length, Number(item[2]));
    }
    assert.equal(pages, 5, out);
    assert.equal(box.printer.jobs.length, 1);
    assert.equal(box.printer.jobs[0]!.state, 'completed');
  } finally {
    await box.agent.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
