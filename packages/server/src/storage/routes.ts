// The local blob store's signed URLs (docs/storage.md): GET serves a file (ranges, ETag) and PUT
// receives one. They live outside /api: no API key (the signature is the credential) and no
// envelope — answers are plain HTTP statuses, as an object store's are, since the callers are
// download managers, browsers and the box's uploader. Each route has its own body limit: a PUT
// may carry exactly the size its URL was signed for, up to BOXHUB_BLOB_MAX_BYTES.
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Clock } from '../clock.ts';
import type { LocalBlobStore } from './local-store.ts';
import { UploadMismatch } from './local-store.ts';
import { attachment } from './content-disposition.ts';
import { verify } from './signed-url.ts';
import { messageOf, statusOf } from '@boxhub/protocol';

export interface BlobRouteOptions {
  store: LocalBlobStore;
  clock: Clock;
  maxBytes: number;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

function plain(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(`${message}\n`);
}

export async function blobRoutes(app: FastifyInstance, o: BlobRouteOptions): Promise<void> {
  // cacheControl: false, or it replaces our Cache-Control with its own 'public, max-age=0'.
  await app.register(fastifyStatic, { root: o.store.o.root, serve: false, decorateReply: true, cacheControl: false });
  // The body of a PUT is the file itself, whatever its type: handed over as the raw stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.setErrorHandler((err, req, reply) => {
    const status = statusOf(err);
    if (status && status >= 400 && status < 500) return plain(reply, status, messageOf(err));
    req.log.error({ err }, 'blob route failed');
    return plain(reply, 500, `internal error (request id ${req.id})`);
  });

  const query = (raw: unknown) => (raw ?? {}) as Record<string, string | undefined>;
  // The key as written in the URL, not as the router decoded it: a plain key never needs a
  // percent-escape, so `scan%2fa%2f1.pdf` (which the router decodes to a signed key) names
  // nothing (docs/storage.md: 404).
  const keyOf = (url: string) => (url.split('?')[0] ?? '').slice('/blobs/'.length);

  // Not part of the API: links the service hands out, absent from /openapi.json.
  app.get('/blobs/*', { schema: { hide: true } }, async (req, reply) => {
    const key = keyOf(req.url);
    // A key outside the plain form (.., %2f, empty segments) names nothing here.
    if (!KEY.test(key)) return plain(reply, 404, 'not found');
    const q = query(req.query);
    const exp = Number(q.exp);
    if (!q.sig || !q.dn || !Number.isInteger(exp)) return plain(reply, 403, 'missing or malformed signature');
    const v = verify(
      o.store.o.secret,
      { method: 'GET', key, exp, extra: q.dn },
      q.sig,
      Math.floor(o.clock.now() / 1000),
    );
    if (v === 'expired') return plain(reply, 403, 'this link has expired');
    if (v !== 'ok') return plain(reply, 403, 'bad signature');
    const meta = await o.store.meta(key);
    if (!meta) return plain(reply, 404, 'not found');
    reply
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .type(meta.contentType)
      .header('content-disposition', attachment(q.dn));
    return reply.sendFile(key);
  });

  app.put('/blobs/*', { bodyLimit: o.maxBytes, schema: { hide: true } }, async (req, reply) => {
    const key = keyOf(req.url);
    if (!KEY.test(key)) return plain(reply, 404, 'not found');
    const q = query(req.query);
    const exp = Number(q.exp);
    const size = Number(q.size);
    const type = req.headers['content-type'] ?? '';
    if (!q.sig || !q.md5 || !Number.isInteger(exp) || !Number.isInteger(size))
      return plain(reply, 403, 'missing or malformed signature');
    const v = verify(
      o.store.o.secret,
      { method: 'PUT', key, exp, extra: `${size}:${q.md5}:${type}` },
      q.sig,
      Math.floor(o.clock.now() / 1000),
    );
    if (v === 'expired') return plain(reply, 403, 'this upload URL has expired');
    if (v !== 'ok')
      return plain(reply, 403, 'bad signature (the URL, its size, MD5 and Content-Type must be sent exactly as given)');
    if (size > o.maxBytes) return plain(reply, 413, `larger than the ${o.maxBytes} bytes a blob may have`);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) !== size)
      return plain(reply, 400, `Content-Length ${declared} is not the ${size} bytes this URL is for`);
    // An object is written once: a second PUT of the same key with the same bytes is a retry
    // that already succeeded.
    const had = await o.store.stat(key);
    if (had) {
      req.raw.resume();
      return had.md5 === q.md5 && had.size === size
        ? reply.code(200).send()
        : plain(reply, 409, 'a different object is stored under this key');
    }
    try {
      const stored = await o.store.receive(key, req.body as NodeJS.ReadableStream as import('node:stream').Readable, {
        contentType: type,
        expect: { size, md5: q.md5 },
      });
      return reply.code(200).header('etag', `"${stored.md5}"`).send();
    } catch (e) {
      if (e instanceof UploadMismatch) return plain(reply, 400, e.message);
      throw e;
    }
  });
}
