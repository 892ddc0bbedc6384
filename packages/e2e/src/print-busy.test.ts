// The node-wide bound on document work (docs/configuration.md "Document and image work"): with
// one slot and a queue of one, three compression-bomb PDFs sent at once are one checked, one
// queued behind it and one refused at once with 10429 and Retry-After; nothing of the refused
// one is kept, and the node takes work again as soon as the burst is over.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { contentBomb } from '@boxhub/pdf-tools/testing/hostile-pdf.ts';
import { startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig({ env: { BOXHUB_WORK_SLOTS: '1', BOXHUB_WORK_QUEUE: '1' } });
});
after(async () => {
  await rig.close();
});

async function printCreate(
  client_uuid: string,
  file: Buffer,
): Promise<{ code: number; msg: string; data: { retry_after?: number } | null; retryAfter: string | null }> {
  const res = await fetch(`${rig.t.url}/api/print/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.app.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      client_uuid,
      file_type: 'pdf',
      file_content: file.toString('base64'),
      options: { media_size: 'SVC_MS_A4' },
    }),
  });
  const e = (await res.json()) as { code: number; msg: string; data: { retry_after?: number } | null };
  return { ...e, retryAfter: res.headers.get('retry-after') };
}

test('past the slots and the queue a PDF print create is refused with 10429 and Retry-After; the others are checked', async () => {
  const box = await rig.box({ printer: 'sim:?make=Epson&model=ET-2850' });
  const bomb = contentBomb(1024 ** 3);
  const answers = await Promise.all([0, 1, 2].map(() => printCreate(box.uuid, bomb)));
  const busy = answers.filter((a) => a.code === 10429);
  assert.equal(busy.length, 1, JSON.stringify(answers.map((a) => [a.code, a.msg])));
  assert.equal(busy[0]!.retryAfter, '5');
  assert.equal(busy[0]!.data?.retry_after, 5);
  assert.match(
    busy[0]!.msg,
    /busy with document and image work \(1 at once; the queue is full, 1 waiting\); the PDF check was not started: try again after 5 s/,
  );
  assert.deepEqual(
    answers.filter((a) => a.code !== 10429).map((a) => a.code),
    [30305, 30305],
    'the one running and the one queued are checked (and refused as bombs)',
  );
  assert.equal(answers.find((a) => a.code === 30305)!.retryAfter, null);
  // The burst is over: the node checks the next file at once.
  const ok = await printCreate(
    box.uuid,
    Buffer.from(
      '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 595.28 841.89] >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
    ),
  );
  assert.equal(ok.code, 0, ok.msg);
});
