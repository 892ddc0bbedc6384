// The HTTP edge: requests that Node's parser or Fastify's router refuse before any route runs
// are answered with the envelope too (HTTP 200, a non-zero code, a message saying what is
// wrong), and a caller without a valid key learns nothing about which paths exist.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestServer, type TestServer } from '../testing/harness.ts';

let t: TestServer;
let key: string;
before(async () => {
  t = await startTestServer();
  key = (await t.createApp()).api_key;
});
after(() => t.close());

/** Sends bytes as they are and reads the whole answer (the server closes after a refusal). */
function rawHttp(request: string): Promise<{ status: string; headers: string; body: string }> {
  const u = new URL(t.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => s.write(request));
    let out = '';
    s.on('data', (d: Buffer) => { out += d.toString('latin1'); });
    s.on('error', reject);
    s.on('close', () => {
      const head = out.slice(0, out.indexOf('\r\n\r\n'));
      resolve({ status: head.split('\r\n')[0] ?? '', headers: head, body: out.slice(out.indexOf('\r\n\r\n') + 4) });
    });
  });
}

function expectEnvelope(r: { status: string; body: string }, code: number, msg: RegExp): void {
  assert.equal(r.status, 'HTTP/1.1 200 OK', r.body);
  const e = JSON.parse(r.body) as { code: number; msg: string; data: unknown };
  assert.deepEqual(Object.keys(e).sort(), ['code', 'data', 'msg']);
  assert.equal(e.code, code, r.body);
  assert.match(e.msg, msg);
  assert.equal(e.data, null);
}

const auth = () => `Authorization: Bearer ${key}\r\n`;
const post = (headers: string, body: string) => `POST /api/client/bind HTTP/1.1\r\nHost: t\r\n${auth()}Content-Type: application/json\r\n${headers}Connection: close\r\n\r\n${body}`;

describe('malformed requests get the envelope', () => {
  test('a URL that is not valid percent-encoding', async () => {
    expectEnvelope(await rawHttp(`GET /api/%zz/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`), 10009, /URL is not valid percent-encoding/);
  });
  test('oversized headers and an oversized URL', async () => {
    expectEnvelope(await rawHttp(`GET /api/client/list?page=1 HTTP/1.1\r\nHost: t\r\n${auth()}X-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`), 10009, /headers \(with the URL\) are larger than 16384 bytes/);
    expectEnvelope(await rawHttp(`GET /api/client/list?page=1&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`), 10009, /larger than 16384 bytes/);
  });
  test('unknown methods, CONNECT, and known methods without an endpoint', async () => {
    expectEnvelope(await rawHttp(`FOO /api/client/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`), 10006, /unknown HTTP method/);
    expectEnvelope(await rawHttp(`CONNECT t:443 HTTP/1.1\r\nHost: t\r\n${auth()}\r\n`), 10006, /CONNECT is not allowed/);
    expectEnvelope(await rawHttp(`PROPFIND /api/client/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`), 10006, /PROPFIND is not allowed on \/api\/client\/list; use GET/);
  });
  test('bad, negative and repeated Content-Length', async () => {
    expectEnvelope(await rawHttp(post('Content-Length: abc\r\n', '{}')), 10009, /Content-Length must be one non-negative decimal number/);
    expectEnvelope(await rawHttp(post('Content-Length: -1\r\n', '{}')), 10009, /Content-Length must be one non-negative decimal number/);
    expectEnvelope(await rawHttp(post('Content-Length: 2\r\nContent-Length: 3\r\n', '{}')), 10009, /Content-Length must appear once/);
  });
  test('Content-Length together with chunked encoding, in either order', async () => {
    const chunked = '2\r\n{}\r\n0\r\n\r\n';
    expectEnvelope(await rawHttp(post('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', chunked)), 10009, /Content-Length together with Transfer-Encoding is not allowed/);
    expectEnvelope(await rawHttp(post('Transfer-Encoding: chunked\r\nContent-Length: 2\r\n', chunked)), 10009, /Content-Length together with Transfer-Encoding is not allowed/);
  });
  test('broken chunked bodies, other transfer codings, bad versions and header names', async () => {
    expectEnvelope(await rawHttp(post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n')), 10009, /malformed chunked body/);
    expectEnvelope(await rawHttp(post('Transfer-Encoding: gzip\r\n', '{}')), 10009, /Transfer-Encoding must be chunked/);
    expectEnvelope(await rawHttp(`GET /api/client/list HTTP/9.9\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`), 10009, /HTTP version must be 1\.0 or 1\.1/);
    expectEnvelope(await rawHttp(`GET /api/client/list HTTP/1.1\r\nHost: t\r\nBad Header: y\r\n${auth()}Connection: close\r\n\r\n`), 10009, /malformed HTTP request: invalid header token/);
  });
  test('a request without Host is answered like any other', async () => {
    const r = await rawHttp(`GET /api/client/list?page=1 HTTP/1.1\r\n${auth()}Connection: close\r\n\r\n`);
    assert.equal(JSON.parse(r.body).code, 0, r.body);
  });
});

describe('without a valid key, paths are indistinguishable', () => {
  const get = (path: string, authorization?: string) => rawHttp(`GET ${path} HTTP/1.1\r\nHost: t\r\n${authorization ? `Authorization: ${authorization}\r\n` : ''}Connection: close\r\n\r\n`);
  test('unknown paths, wrong methods and real endpoints answer the same 20001', async () => {
    for (const authorization of [undefined, 'Bearer bhk_not-a-key']) {
      const answers = await Promise.all(['/api/nope', '/api/client/bind', '/api/client/list?page=1', '/api', '/api/operator'].map(async (p) => JSON.parse((await get(p, authorization)).body) as { code: number; msg: string }));
      assert.deepEqual(new Set(answers.map((a) => JSON.stringify(a))).size, 1, JSON.stringify(answers));
      assert.equal(answers[0]!.code, 20001);
    }
  });
  test('with a key, unknown paths and wrong methods say so', async () => {
    expectEnvelope(await get('/api/nope', `Bearer ${key}`), 10005, /no endpoint GET \/api\/nope/);
    expectEnvelope(await get('/api/client/bind', `Bearer ${key}`), 10006, /use POST/);
  });
});
