// Remote printing end to end (docs/api.md: "Printing", "Print task", "Printer capability"):
// a real server, broker and simulated box whose printer describes itself with IPP attributes
// and really prints (sides paced and counted), a real HTTP server for file_url and a real
// callback receiver.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { PDFDocument } from 'pdf-lib';
import { CallbackReceiver, type Body, type CallbackEvent } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { refusal, startRig, type Rig, type RigBox } from './fixtures.ts';

type CreateBody = Omit<Body<'/api/print/create'>, 'client_uuid' | 'file_type'>;

const A4 = [595.28, 841.89] as const;
async function pdf(pages: number, size: readonly [number, number] = A4): Promise<Buffer> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([size[0], size[1]]).drawText(`page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save());
}

let rig: Rig;
let rx: Receiver;
let files: Server;
let filesUrl = '';
const served = new Map<string, { status: number; body?: Buffer; headers?: Record<string, string> }>();
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  files = createServer((req, res) => {
    const f = served.get(req.url ?? '');
    if (!f) {
      res.writeHead(404).end('no such file');
      return;
    }
    res.writeHead(f.status, f.headers ?? {}).end(f.body);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  const a = files.address();
  filesUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
after(async () => {
  await rig.close();
  await rx.close();
  await new Promise((r) => files.close(r));
});

const info = (box: RigBox, print_uuid: string) => rig.sdk.print.info({ client_uuid: box.uuid, print_uuid });
const ended = (box: RigBox, print_uuid: string) =>
  rig.sdk.print.waitForFinish({ client_uuid: box.uuid, print_uuid }, { intervalMs: 50, timeoutMs: 30_000 });
const create = (box: RigBox, body: CreateBody) =>
  rig.sdk.print.create({ client_uuid: box.uuid, file_type: 'pdf', ...body });
const uuidOf = async (p: ReturnType<typeof create>) => (await p).uuid!;

describe('capability', () => {
  test("the nested tree the box built from the printer's IPP attributes", async () => {
    const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850' });
    const r = await eventually(() => rig.sdk.print.capability({ client_uuid: box.uuid }), 'capability');
    assert.equal(r.make, 'Epson');
    assert.equal(r.model, 'ET-2850');
    assert.equal(r.support_strict, true);
    assert.ok(r.color_mode.includes('SVC_CM_MONO'));
    const a4 = r.media_sizes.find((m) => m.media_size === 'SVC_MS_A4')!;
    const plain = a4.media_types.find((t) => t.media_type === 'SVC_MT_PLAIN')!;
    assert.deepEqual(plain.duplex, ['SVC_DP_NONE', 'SVC_DP_NOTUMBLE', 'SVC_DP_TUMBLE']);
    assert.ok(plain.quality.includes('SVC_QU_NORMAL'));
  });

  test("30301 without a printer, 30002 for a device that is not the application's", async () => {
    const box = await rig.box({ printer: 'sim:?connected=0' });
    await eventually(
      async () => (await refusal(rig.sdk.print.capability({ client_uuid: box.uuid }))).code === 30301,
      '30301',
    );
    assert.equal((await refusal(rig.sdk.print.capability({ client_uuid: randomUUID() }))).code, 30002);
  });
});

describe('a print from create to finish', () => {
  test("file_content, strict and duplex: callbacks print.ack, print.started, print.finished; printed_pages are the printer's sides", async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=5' });
    const doc = await pdf(3);
    const uuid = await uuidOf(
      create(box, {
        file_content: doc.toString('base64'),
        file_check_sum: createHash('md5').update(doc).digest('hex'),
        options: { callback_url: `${rx.url}/p1`, strict: true, duplex: 'SVC_DP_NOTUMBLE', number: 1 },
      }),
    );
    const done = await ended(box, uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.action_ack, true);
    assert.equal(done.started, true);
    assert.equal(done.pages, 3, 'estimated: selected pages × copies');
    assert.equal(done.printed_pages, 4, 'a 3-page document printed duplex gives 4 sides');
    assert.equal(done.file_size, Math.ceil(doc.length / 1024));
    assert.equal(typeof done.download_spent, 'number');
    assert.ok(done.finished_at! >= done.started_at!);
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    // Delivery is at least once (docs/callbacks.md): a slow answer can bring a callback again,
    // always with its id; receivers de-duplicate on it, and so does this test.
    const unique = (): CallbackEvent[] => {
      const byId = new Map<string, CallbackEvent>();
      for (const x of rx.received.filter((r) => r.path.endsWith('/p1'))) {
        const e = receiver.receive(x);
        byId.set(e.id, e);
      }
      return [...byId.values()];
    };
    const events = await eventually(() => {
      const l = unique();
      return l.length >= 3 ? l : undefined;
    }, 'three print callbacks');
    assert.deepEqual(
      events.map((e) => e.type).sort(),
      ['print.ack', 'print.finished', 'print.started'],
      'one callback id per event',
    );
    const fin = events.find((e) => e.type === 'print.finished');
    assert.ok(fin?.type === 'print.finished');
    assert.equal(fin.body.uuid, uuid);
    assert.equal(fin.body.client_uuid, box.uuid);
    assert.equal(fin.body.printed_pages, 4);
    const job = box.printer.jobs.find((j) => j.task === uuid)!;
    assert.equal(job.state, 'completed');
    assert.equal(job.options.duplex, 'SVC_DP_NOTUMBLE');
  });

  test('file_url through the URL guard, no redirects, size limit; copies and page ranges', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=1' });
    served.set('/five.pdf', { status: 200, body: await pdf(5) });
    served.set('/moved.pdf', { status: 302, headers: { location: `${filesUrl}/five.pdf` } });
    const done = await ended(
      box,
      await uuidOf(
        create(box, { file_url: `${filesUrl}/five.pdf`, options: { number: 2, page_ranges: '1-2,5', strict: true } }),
      ),
    );
    assert.equal(done.pages, 6, '3 selected pages × 2 copies');
    assert.equal(done.printed_pages, 6);
    const moved = await refusal(create(box, { file_url: `${filesUrl}/moved.pdf` }));
    assert.equal(moved.code, 30310);
    assert.match(moved.msg, /redirect/);
    const missing = await refusal(create(box, { file_url: `${filesUrl}/nothing.pdf` }));
    assert.equal(missing.code, 30310);
    assert.match(missing.msg, /404/);
  });

  test('options.direct: the box fetches the file; pages (selected pages × copies) and file_size in info and callbacks', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=1' });
    const doc = await pdf(5);
    served.set('/direct-five.pdf', { status: 200, body: doc });
    const uuid = await uuidOf(
      create(box, {
        file_url: `${filesUrl}/direct-five.pdf`,
        options: { direct: true, number: 2, page_ranges: '1-2,5', callback_url: `${rx.url}/direct` },
      }),
    );
    const done = await ended(box, uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.pages, 6, '3 selected pages × 2 copies (was 0: the server never saw the file)');
    assert.equal(done.file_size, Math.ceil(doc.length / 1024), 'the size the box downloaded, KB');
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    const cbs = await eventually(() => {
      const l = rx.received.filter((x) => x.path.endsWith('/direct')).map((x) => receiver.receive(x));
      return l.some((e) => e.type === 'print.finished') ? l : undefined;
    }, 'print callbacks');
    for (const e of cbs) {
      if (e.type === 'print.started' || e.type === 'print.finished') {
        assert.equal(e.body.pages, 6, `${e.type} pages`);
        assert.equal(e.body.file_size, Math.ceil(doc.length / 1024), `${e.type} file_size`);
      }
    }
  });

  test('tasks print one after another in the order they were created', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=20' });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await uuidOf(create(box, { file_content: (await pdf(1 + i)).toString('base64') })));
    }
    for (const id of ids) await ended(box, id);
    assert.deepEqual(
      box.printer.jobs.map((j) => j.task),
      ids,
    );
  });
});

describe('refusals', () => {
  test('every precondition and hostile input gets its own code and a clear message; nothing is printed', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=1' });
    const good = (await pdf(1)).toString('base64');
    // Bodies an application could send through the SDK (right types, wrong values or state).
    const cases: Array<[CreateBody, number, RegExp]> = [
      [{}, 10001, /exactly one of file_url and file_content/],
      [{ file_content: good, file_url: `${filesUrl}/five.pdf` }, 10001, /exactly one/],
      [{ file_content: 'not base64!' }, 10001, /Base64/],
      [{ file_content: good, file_check_sum: 'a'.repeat(32) }, 30309, /MD5/],
      [{ file_content: (await pdf(1, [612, 792])).toString('base64') }, 30306, /./],
      [{ file_content: (await pdf(2)).toString('base64'), options: { page_ranges: '1-3' } }, 30307, /2 pages|page/],
      [{ file_content: good, options: { page_ranges: '3-1' } }, 10001, /page_ranges/],
      [{ file_content: good, options: { input_slot: 'SVC_IS_CASS3' } }, 30303, /input_slot.*allowed/],
      [{ file_content: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]).toString('base64') }, 30304, /./],
      [
        { file_content: good, options: { encrypt: true, cipher: 'ab' } },
        10001,
        /options\.cipher must be 160 hex digits/,
      ],
      [{ file_content: good, options: { cipher: 'ab' } }, 10001, /encrypt/],
      [{ file_content: good, options: { callback_url: 'http://169.254.169.254/x' } }, 10008, /callback_url/],
      [{ file_content: good, options: { number: 0 } }, 10001, /options\.number/],
    ];
    for (const [body, code, msg] of cases) {
      const r = await refusal(create(box, body));
      assert.equal(r.code, code, `${JSON.stringify(body).slice(0, 120)}: ${r.msg}`);
      assert.match(r.msg, msg);
    }
    // Raw: a value outside the type the SDK declares (the SDK refuses to compile it).
    const nope = await rig.api.post('/api/print/create', {
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: good,
      options: { media_size: 'SVC_MS_NOPE' },
    });
    assert.equal(nope.code, 10001, nope.msg);
    assert.match(nope.msg, /media_size/);
    assert.equal(box.printer.jobs.length, 0, 'nothing reached the printer');
  });

  test('an oversized body says so; a printer in error is refused rather than queued; an offline box 30004', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=1' });
    // Raw: a body over the limit, which only a hostile or broken client sends.
    const big = await rig.api.raw('POST', '/api/print/create', {
      body: JSON.stringify({ client_uuid: box.uuid, file_type: 'pdf', file_content: 'A'.repeat(65 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    const env = big.json();
    assert.equal(env.code, 10003);
    assert.match(env.msg, /67108864 bytes \/api\/print\/create accepts/);
    box.printer.setFault('media-empty');
    await eventually(
      async () => (await rig.sdk.devices.info({ uuid: box.uuid })).client?.printer?.error_code === 5,
      'paper out reported',
    );
    const r = await refusal(create(box, { file_content: (await pdf(1)).toString('base64') }));
    assert.equal(r.code, 30308);
    assert.match(r.msg, /error 5/);
    assert.deepEqual(r.data, { printer_error_code: 5 });
    box.printer.setFault(null);
    const off = await rig.box({ connect: false });
    assert.equal((await refusal(create(off, { file_content: (await pdf(1)).toString('base64') }))).code, 30004);
  });
});

describe('cancel', () => {
  test('cancels the task printing and every queued one; each ends cancelled with its callback; the printer stops half-way', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=10' });
    // The first job holds after two sides (a printer half-way through), so the cancel meets it
    // printing however slow the machine is.
    box.printer.pauseAfter(2);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        await uuidOf(
          create(box, {
            file_content: (await pdf(6)).toString('base64'),
            options: { strict: true, callback_url: `${rx.url}/cancel` },
          }),
        ),
      );
    }
    await eventually(() => (box.printer.jobs[0]?.impressions ?? 0) >= 2, 'the first task is printing');
    await rig.sdk.print.cancel({ client_uuid: box.uuid }); // resolves only on code 0
    for (const id of ids) {
      const i = await info(box, id);
      assert.equal(i.finished, true, 'finished when cancel answers');
      assert.equal(i.error_code, 4201);
    }
    const first = await eventually(async () => {
      const i = await info(box, ids[0]!);
      return i.printed_pages !== undefined ? i : undefined;
    }, "the printer's count of what it printed");
    assert.equal(first.printed_pages, 2, 'stopped half-way: 2 of 6 sides');
    await eventually(() => box.agent.jobs.states().length === 0, 'the box emptied its queue');
    assert.deepEqual(
      box.printer.jobs.map((j) => j.task),
      [ids[0]],
      'the queued tasks never reached the printer',
    );
    assert.equal(box.printer.jobs[0]!.state, 'canceled');
    const receiver = new CallbackReceiver({ secrets: rig.app.callback_secret });
    const cbs = await eventually(() => {
      const l = rx.received
        .filter((x) => x.path.endsWith('/cancel'))
        .map((x) => receiver.receive(x))
        .flatMap((e) => (e.type === 'print.finished' ? [e] : []));
      return l.length >= 3 ? l : undefined;
    }, 'print.finished for each');
    assert.deepEqual(new Set(cbs.map((c) => c.body.uuid)), new Set(ids));
    // Strict mode: each cancelled task's print.finished carries the printer's count (it had none
    // before: the callback went at the cancel, before the box reported it).
    assert.deepEqual(
      ids.map((id) => cbs.find((c) => c.body.uuid === id)?.body.printed_pages),
      [2, 0, 0],
    );
    assert.ok(cbs.every((c) => c.body.error_code === 4201));
  });

  test('a cancel racing creates leaves nothing printing and nothing queued', async () => {
    const box = await rig.box({ printer: 'sim:?side_ms=50' });
    const doc = (await pdf(2)).toString('base64');
    const [results] = await Promise.all([
      Promise.allSettled(Array.from({ length: 5 }, () => create(box, { file_content: doc }))),
      (async () => {
        await new Promise((r) => setTimeout(r, 5));
        await rig.sdk.print.cancel({ client_uuid: box.uuid }).catch(() => undefined);
      })(),
    ]);
    // Whatever survived the race is cancelled now; then nothing may print.
    await rig.sdk.print.cancel({ client_uuid: box.uuid });
    const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.uuid!] : []));
    for (const id of created) assert.equal((await info(box, id)).finished, true);
    // What the box still holds is the error's detail when it does not empty.
    await eventually(() => {
      const held = box.agent.jobs.states();
      if (held.length)
        throw new Error(
          `holds ${JSON.stringify(held)}; printer ${JSON.stringify(box.printer.jobs.map((j) => ({ task: j.task, state: j.state })))}`,
        );
      return true;
    }, 'the box holds nothing');
    assert.ok(
      box.printer.jobs.every((j) => j.state !== 'processing'),
      'nothing is printing',
    );
  });
});
