// Large inline print bodies and the node-wide work bound (docs/configuration.md "Document and
// image work"): with one slot and a queue of one, a body of 8 MiB or more takes the slot before
// it is read and keeps it through its PDF check; a second waits its turn, a third is refused
// at once with 10429 and Retry-After, unread. The files arrive intact (file_check_sum is
// verified against the bytes decoded inside the body), also with `\/` escapes as PHP writes them;
// a client gone while waiting gives its place up; a chunked body waits once 8 MiB have come.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig({ env: { BOXHUB_WORK_SLOTS: '1', BOXHUB_WORK_QUEUE: '1' } });
});
after(async () => {
  await rig.close();
});

/** A one-page A4 PDF of about `bytes`, most of it an unreferenced stream of varied bytes. */
function largePdf(bytes: number, seed: number): Buffer {
  const filler = Buffer.alloc(bytes);
  for (let i = 0, x = seed; i < bytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    filler[i] = x >>> 24;
  }
  return Buffer.concat([
    Buffer.from(
      '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 595.28 841.89] >> endobj\n',
    ),
    Buffer.from(`4 0 obj << /Length ${bytes} >> stream\n`),
    filler,
    Buffer.from('\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'),
  ]);
}

function body(client_uuid: string, file: Buffer, escapeSlashes = false): Buffer {
  let text = JSON.stringify({
    client_uuid,
    file_type: 'pdf',
    file_content: file.toString('base64'),
    file_check_sum: createHash('md5').update(file).digest('hex'),
    options: { media_size: 'SVC_MS_A4' },
  });
  if (escapeSlashes) text = text.replace(/\//g, '\\/');
  return Buffer.from(text);
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  envelope: { code: number; msg: string; data: { retry_after?: number; uuid?: string } | null };
}

/** POST /api/print/create on its own connection: the head and `first` bytes of the body now,
 *  the rest when `rest()` is called. */
function rawCreate(full: Buffer, first: number): { answer: Promise<Answer>; rest(): void; socket: Socket } {
  const url = new URL(rig.t.url);
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined); // a refused body: the server closes while we could still write
  socket.write(
    `POST /api/print/create HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${rig.app.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${full.length}\r\n\r\n`,
  );
  if (first > 0) socket.write(full.subarray(0, first));
  const answer = new Promise<Answer>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const tryParse = () => {
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [line, ...lines] = got.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length']);
      if (got.length < end + 4 + length) return;
      socket.destroy();
      resolve({
        status: Number(line!.split(' ')[1]),
        headers,
        envelope: JSON.parse(got.subarray(end + 4, end + 4 + length).toString('utf8')) as Answer['envelope'],
      });
    };
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      tryParse();
    });
    socket.on('close', () =>
      reject(new Error(`connection closed without a whole answer: ${got.toString('latin1').slice(0, 200)}`)),
    );
  });
  return {
    answer,
    socket,
    rest: () => {
      socket.write(full.subarray(first));
    },
  };
}

test('a large inline body waits for a work slot before it is read; past the queue it is refused unread; the files arrive intact', async () => {
  const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850' });
  const gate = rig.t.server.services.work;
  const a = body(box.uuid, largePdf(7 << 20, 1));
  const b = body(box.uuid, largePdf(7 << 20, 2), true);
  assert.ok(a.length >= 8 << 20 && b.length >= 8 << 20 && b.includes('\\/'));

  // A: its head and 1 KiB of its body, then nothing: it holds the node's one slot.
  const first = rawCreate(a, 1024);
  await eventually(() => gate.active === 1, 'the first large body holds the slot');
  // B, sent whole: it waits for the slot, nothing of it checked yet.
  const second = rawCreate(b, b.length);
  let secondAnswered = false;
  void second.answer.then(
    () => {
      secondAnswered = true;
    },
    () => undefined,
  );
  await eventually(() => gate.queued === 1, 'the second waits in the queue');

  // C: past the queue, refused at once on its head alone, with Retry-After, and the connection closes.
  const third = rawCreate(body(box.uuid, largePdf(7 << 20, 3)), 0);
  const refused = await third.answer;
  assert.equal(refused.status, 200);
  assert.equal(refused.envelope.code, 10429, refused.envelope.msg);
  assert.equal(refused.headers['retry-after'], '5');
  assert.equal(refused.envelope.data?.retry_after, 5);
  assert.equal(refused.headers.connection, 'close');
  assert.match(
    refused.envelope.msg,
    /busy with document and image work \(1 at once; the queue is full, 1 waiting\); reading the request body was not started/,
  );
  assert.equal(secondAnswered, false, 'B waits while A holds the slot');
  assert.equal(gate.active, 1);

  // A's body arrives: it is checked in the slot it holds (no second slot), then B gets it.
  first.rest();
  const [ra, rb] = await Promise.all([first.answer, second.answer]);
  assert.equal(ra.envelope.code, 0, ra.envelope.msg);
  assert.equal(rb.envelope.code, 0, rb.envelope.msg);
  assert.equal(gate.peak, 1, 'never more than the one slot');
  await eventually(() => gate.active === 0 && gate.queued === 0, 'the slot is free again');
  // The box received each file intact (it checks the MD5 it is given against what it downloads).
  for (const uuid of [ra.envelope.data!.uuid!, rb.envelope.data!.uuid!]) {
    const info = await eventually(async () => {
      const i = (
        await rig.api.post<{ started: boolean; finished: boolean; error_code: number }>('/api/print/info', {
          client_uuid: box.uuid,
          print_uuid: uuid,
        })
      ).data;
      return i.started || i.finished ? i : undefined;
    }, `print ${uuid} started`);
    assert.deepEqual([info.started, info.error_code], [true, 0]);
  }
});

test('a client that goes away while its large body waits gives its place in the queue up', async () => {
  const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850' });
  const gate = rig.t.server.services.work;
  const holder = rawCreate(body(box.uuid, largePdf(7 << 20, 4)), 1024);
  await eventually(() => gate.active === 1, 'the first large body holds the slot');
  const waiter = rawCreate(body(box.uuid, largePdf(7 << 20, 5)), 0);
  await eventually(() => gate.queued === 1, 'the second waits in the queue');
  // Neither gets an answer: their connections are closed from this side.
  for (const r of [holder, waiter]) r.answer.catch(() => undefined);
  waiter.socket.destroy();
  await eventually(() => gate.queued === 0, 'the place is given up');
  holder.socket.destroy();
  await eventually(() => gate.active === 0, 'and the slot of a body that never came goes back');
});

test('a chunked body (no Content-Length) waits for its slot once 8 MiB of it have come', async () => {
  const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850' });
  const gate = rig.t.server.services.work;
  const holder = rawCreate(body(box.uuid, largePdf(7 << 20, 6)), 1024);
  holder.answer.catch(() => undefined);
  await eventually(() => gate.active === 1, 'the first large body holds the slot');
  const whole = body(box.uuid, largePdf(9 << 20, 7));
  const chunked = fetch(`${rig.t.url}/api/print/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.app.api_key}`, 'content-type': 'application/json' },
    duplex: 'half',
    body: new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < whole.length; i += 1 << 20) c.enqueue(whole.subarray(i, i + (1 << 20)));
        c.close();
      },
    }),
  } as RequestInit).then(async (r) => (await r.json()) as { code: number; msg: string });
  await eventually(() => gate.queued === 1, 'the chunked body waits in the queue');
  holder.socket.destroy();
  const answer = await chunked;
  assert.equal(answer.code, 0, answer.msg);
  await eventually(() => gate.active === 0 && gate.queued === 0, 'the slot is free again');
});
