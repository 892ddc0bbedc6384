// putFile: an item file PUT to a real HTTP receiver on loopback, byte for byte, with the
// signed URL's headers; the receiver's answer as it is; abort and a silent receiver end it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { putFile } from '../src/transfer/put-file.ts';

interface Got {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  md5: string;
  size: number;
}

async function receiver(answer: (g: Got) => { status: number; body: string } | 'hang') {
  const got: Got[] = [];
  const server = createServer((req, res) => {
    const h = createHash('md5');
    let size = 0;
    req.on('data', (c: Buffer) => {
      h.update(c);
      size += c.length;
    });
    req.on('end', () => {
      const g: Got = {
        headers: req.headers,
        md5: h.digest('hex'),
        size,
        ...(req.method ? { method: req.method } : {}),
        ...(req.url ? { url: req.url } : {}),
      };
      got.push(g);
      const a = answer(g);
      if (a !== 'hang') res.writeHead(a.status).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('putFile sends the file byte for byte with the given headers and returns the answer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-put-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rx = await receiver((g) => ({ status: 200, body: JSON.stringify({ md5: g.md5 }) }));
  t.after(() => rx.close());
  // Larger than the two 256 KB buffers several times over, and not a multiple of them.
  const data = randomBytes(3 * 1024 * 1024 + 12345);
  const file = join(dir, 'item-1.pdf');
  writeFileSync(file, data);
  const r = await putFile(`${rx.url}/upload/1?sig=abc`, file, {
    headers: { 'content-type': 'application/pdf', 'x-amz-meta-md5': 'x' },
  });
  assert.deepEqual(
    [r.status, JSON.parse(r.body).md5, r.bytes],
    [200, createHash('md5').update(data).digest('hex'), data.length],
  );
  const g = rx.got[0]!;
  assert.deepEqual(
    [g.method, g.url, g.size, g.headers['content-type'], g.headers['x-amz-meta-md5'], g.headers['content-length']],
    ['PUT', '/upload/1?sig=abc', data.length, 'application/pdf', 'x', String(data.length)],
  );
  writeFileSync(join(dir, 'empty.pdf'), '');
  assert.equal((await putFile(`${rx.url}/e`, join(dir, 'empty.pdf'))).bytes, 0);
});

test('putFile: an error status is returned, not thrown; abort and a silent receiver end it; bad URLs are refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-put-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'item.pdf');
  writeFileSync(file, randomBytes(100_000));
  const denied = await receiver(() => ({ status: 403, body: 'expired signature' }));
  t.after(() => denied.close());
  const r = await putFile(`${denied.url}/x`, file);
  assert.deepEqual([r.status, r.body], [403, 'expired signature']);
  const silent = await receiver(() => 'hang');
  t.after(() => silent.close());
  await assert.rejects(putFile(`${silent.url}/x`, file, { timeoutMs: 100 }), /made no progress for 100 ms/);
  const ac = new AbortController();
  const p = putFile(`${silent.url}/x`, file, { signal: ac.signal });
  ac.abort(new Error('task stopped'));
  await assert.rejects(p, /task stopped/);
  await assert.rejects(putFile('ftp://127.0.0.1/x', file), /http or https/);
  await assert.rejects(putFile(`${denied.url}/x`, join(dir, 'missing.pdf')), /ENOENT/);
});
