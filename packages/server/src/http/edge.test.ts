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
    s.on('data', (d: Buffer) => {
      out += d.toString('latin1');
    });
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
const post = (headers: string, body: string) =>
  `POST /api/client/bind HTTP/1.1\r\nHost: t\r\n${auth()}Content-Type: application/json\r\n${headers}Connection: close\r\n\r\n${body}`;

describe('malformed requests get the envelope', () => {
  test('a URL that is not valid percent-encoding', async () => {
    expectEnvelope(
      await rawHttp(`GET /api/%zz/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`),
      10009,
      /URL is not valid percent-encoding/,
    );
  });
  test('oversized headers and an oversized URL', async () => {
    expectEnvelope(
      await rawHttp(
        `GET /api/client/list?page=1 HTTP/1.1\r\nHost: t\r\n${auth()}X-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      ),
      10009,
      /headers \(with the URL\) are larger than 16384 bytes/,
    );
    expectEnvelope(
      await rawHttp(
        `GET /api/client/list?page=1&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`,
      ),
      10009,
      /larger than 16384 bytes/,
    );
  });
  test('unknown methods, CONNECT, and known methods without an endpoint', async () => {
    expectEnvelope(
      await rawHttp(`FOO /api/client/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`),
      10006,
      /unknown HTTP method/,
    );
    expectEnvelope(
      await rawHttp(`CONNECT t:443 HTTP/1.1\r\nHost: t\r\n${auth()}\r\n`),
      10006,
      /CONNECT is not allowed/,
    );
    expectEnvelope(
      await rawHttp(`PROPFIND /api/client/list HTTP/1.1\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`),
      10006,
      /PROPFIND is not allowed on \/api\/client\/list; use GET/,
    );
  });
  test('bad, negative and repeated Content-Length', async () => {
    expectEnvelope(
      await rawHttp(post('Content-Length: abc\r\n', '{}')),
      10009,
      /Content-Length must be one non-negative decimal number/,
    );
    expectEnvelope(
      await rawHttp(post('Content-Length: -1\r\n', '{}')),
      10009,
      /Content-Length must be one non-negative decimal number/,
    );
    expectEnvelope(
      await rawHttp(post('Content-Length: 2\r\nContent-Length: 3\r\n', '{}')),
      10009,
      /Content-Length must appear once/,
    );
  });
  test('Content-Length together with chunked encoding, in either order', async () => {
    const chunked = '2\r\n{}\r\n0\r\n\r\n';
    expectEnvelope(
      await rawHttp(post('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', chunked)),
      10009,
      /Content-Length together with Transfer-Encoding is not allowed/,
    );
    expectEnvelope(
      await rawHttp(post('Transfer-Encoding: chunked\r\nContent-Length: 2\r\n', chunked)),
      10009,
      /Content-Length together with Transfer-Encoding is not allowed/,
    );
  });
  test('broken chunked bodies, other transfer codings, bad versions and header names', async () => {
    expectEnvelope(
      await rawHttp(post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n')),
      10009,
      /malformed chunked body/,
    );
    expectEnvelope(
      await rawHttp(post('Transfer-Encoding: gzip\r\n', '{}')),
      10009,
      /Transfer-Encoding must be chunked/,
    );
    expectEnvelope(
      await rawHttp(`GET /api/client/list HTTP/9.9\r\nHost: t\r\n${auth()}Connection: close\r\n\r\n`),
      10009,
      /HTTP version must be 1\.0 or 1\.1/,
    );
    expectEnvelope(
      await rawHttp(`GET /api/client/list HTTP/1.1\r\nHost: t\r\nBad Header: y\r\n${auth()}Connection: close\r\n\r\n`),
      10009,
      /malformed HTTP request: invalid header token/,
    );
  });
  test('a request without Host is answered like any other', async () => {
    const r = await rawHttp(`GET /api/client/list?page=1 HTTP/1.1\r\n${auth()}Connection: close\r\n\r\n`);
    assert.equal(JSON.parse(r.body).code, 0, r.body);
  });
});

describe('without a valid key, paths are indistinguishable', () => {
  const get = (path: string, authorization?: string) =>
    rawHttp(
      `GET ${path} HTTP/1.1\r\nHost: t\r\n${authorization ? `Authorization: ${authorization}\r\n` : ''}Connection: close\r\n\r\n`,
    );
  test('unknown paths, wrong methods and real endpoints answer the same 20001', async () => {
    for (const authorization of [undefined, 'Bearer bhk_not-a-key']) {
      const answers = await Promise.all(
        ['/api/nope', '/api/client/bind', '/api/client/list?page=1', '/api', '/api/operator'].map(
          async (p) => JSON.parse((await get(p, authorization)).body) as { code: number; msg: string },
        ),
      );
      assert.deepEqual(new Set(answers.map((a) => JSON.stringify(a))).size, 1, JSON.stringify(answers));
      assert.equal(answers[0]!.code, 20001);
    }
  });
  test('with a key, unknown paths and wrong methods say so', async () => {
    expectEnvelope(await get('/api/nope', `Bearer ${key}`), 10005, /no endpoint GET \/api\/nope/);
    expectEnvelope(await get('/api/client/bind', `Bearer ${key}`), 10006, /use POST/);
  });
});

/** Sends the head, then one byte of the body a second, until the server answers; the answer and when it came. */
function trickle(head: string): Promise<{ status: string; body: string; afterMs: number }> {
  const u = new URL(t.url);
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    let out = '';
    let at = 0;
    const s = connect(Number(u.port), u.hostname, () => s.write(head));
    const drip = setInterval(() => {
      if (s.writable) s.write('a');
    }, 1000);
    s.on('data', (d: Buffer) => {
      if (!at) at = Date.now();
      out += d.toString('latin1');
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      clearInterval(drip);
      if (!at) {
        reject(new Error('closed without an answer'));
        return;
      }
      const i = out.indexOf('\r\n\r\n');
      resolve({ status: out.slice(0, i).split('\r\n')[0] ?? '', body: out.slice(i + 4), afterMs: at - t0 });
    });
  });
}

describe('slow bodies', () => {
  test('a body still arriving after 30 s is cut then: the envelope on the API, 408 at the receiver and the blob store', async () => {
    const head = (path: string) =>
      `POST ${path} HTTP/1.1\r\nHost: t\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const [api, direct, blobs] = await Promise.all([
      trickle(head('/api/client/bind')),
      // The receiver reads the body only after the headers it checks: a well-formed start.
      trickle(
        `POST /direct/${'A'.repeat(43)} HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n`,
      ),
      (async () => {
        const up = await t.server.blobs.uploadUrl('edge/slow.bin', {
          size: 100000,
          md5: 'a'.repeat(32),
          contentType: 'application/octet-stream',
          expiresInMs: 600_000,
        });
        const url = new URL(up.url);
        return trickle(
          `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n`,
        );
      })(),
    ]);
    expectEnvelope(api, 10009, /request not received within 30 s/);
    // docs/errors.md: 30 s (Node checks each second).
    assert.ok(api.afterMs >= 29_500 && api.afterMs < 34_000, `the API cut it after ${api.afterMs} ms`);
    for (const [name, r] of [
      ['direct', direct],
      ['blobs', blobs],
    ] as const) {
      assert.doesNotMatch(r.status, / 2\d\d /, `${name}: never a 2xx for a request that was not stored (${r.status})`);
    }
    assert.equal(blobs.status, 'HTTP/1.1 408 Request Timeout', blobs.body);
    assert.ok(blobs.afterMs < 34_000, `the blob PUT was cut after ${blobs.afterMs} ms`);
  });
});

describe('the receiver and signed blob URLs answer refusals with statuses, never a 2xx', () => {
  const statusOf = async (request: string) => (await rawHttp(request)).status;
  test('oversized headers, bad URLs, broken bodies and wrong methods', async () => {
    const token = 'A'.repeat(43);
    const up = new URL(
      (
        await t.server.blobs.uploadUrl('edge/broken.bin', {
          size: 2,
          md5: 'a'.repeat(32),
          contentType: 'multipart/form-data; boundary=x',
          expiresInMs: 600_000,
        })
      ).url,
    );
    for (const [method, path] of [
      ['POST', `/direct/${token}`],
      ['PUT', `${up.pathname}${up.search}`],
    ]) {
      assert.equal(
        await statusOf(
          `${method} ${path} HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
        ),
        'HTTP/1.1 431 Request Header Fields Too Large',
        path,
      );
      assert.equal(
        await statusOf(
          `${method} ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        ),
        'HTTP/1.1 400 Bad Request',
        path,
      );
      assert.equal(
        await statusOf(
          `${method} ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
        ),
        'HTTP/1.1 400 Bad Request',
        path,
      );
    }
    assert.equal(
      await statusOf(`POST /direct/%zz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`),
      'HTTP/1.1 400 Bad Request',
    );
    assert.equal(
      await statusOf(`GET /blobs/%zz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`),
      'HTTP/1.1 400 Bad Request',
    );
    assert.equal(
      await statusOf(`GET /direct/${token} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`),
      'HTTP/1.1 405 Method Not Allowed',
    );
    assert.equal(
      await statusOf(`POST /blobs/x/y HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
      'HTTP/1.1 405 Method Not Allowed',
    );
    assert.equal(
      await statusOf(`POST /direct HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
      'HTTP/1.1 404 Not Found',
    );
    // Oversized headers on a connection that served the receiver before: still a status.
    const u = new URL(t.url);
    const both = await new Promise<string>((resolve, reject) => {
      let out = '';
      const s = connect(Number(u.port), u.hostname, () => {
        s.write(`GET /direct/${token} HTTP/1.1\r\nHost: t\r\n\r\n`);
        setTimeout(() => {
          s.write(`POST /direct/${token} HTTP/1.1\r\nHost: t\r\n`);
          setTimeout(() => s.write(`X-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 100);
        }, 300);
      });
      s.on('data', (d: Buffer) => {
        out += d.toString('latin1');
      });
      s.on('error', reject);
      s.on('close', () => resolve(out));
    });
    const statuses = both.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
    assert.deepEqual(statuses, ['HTTP/1.1 405', 'HTTP/1.1 431'], both.slice(0, 400));
  });
});
