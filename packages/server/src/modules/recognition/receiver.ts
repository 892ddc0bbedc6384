// The receiving end of direct transfer (boxhub direct v1, docs/direct-transfer.md) for this
// service's recognition tasks: POST {public URL}/direct/{token}. Outside /api: no API key (the
// Standard Webhooks signature with the bound scan task's direct secret is the credential) and
// no envelope; answers are the HTTP statuses the box understands, with a one-line reason.
// Pages are stored (blob store, then rows in one transaction with their recognition jobs)
// before the 2xx, so the box forgets nothing the service has not kept.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  parseManifest,
  webhookId,
  MAX_PAGES_PER_BATCH,
  type DirectPageMeta,
  type EndManifest,
  type PagesManifest,
} from '@boxhub/protocol/direct-wire.ts';
import type { TaskRow } from '../../db/schema.ts';
import { PartLimitError, readFile, readParts, type Part } from './multipart-reader.ts';
import type { NewPage } from './repository.ts';
import { ASSEMBLE_JOB, PAGE_JOB, type ReceiverDeps } from './service.ts';
import { checkTimestamp, verify } from './signature.ts';
import { jpegSize, pageTooLarge } from './page-pixels.ts';
import { transact } from '../../db/transaction.ts';
import { messageOf, statusOf } from '@boxhub/protocol';

export interface ReceiverOptions {
  deps: ReceiverDeps;
  /** Largest page image accepted (BOXHUB_DIRECT_MAX_PAGE_BYTES). */
  maxPageBytes: number;
}

class Refusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const pageKey = (task: string, seq: number) => `recognition/${task}/${String(seq).padStart(5, '0')}.jpg`;
export const pageJobRef = (task: string, seq: number) => `${task}:${seq}`;

function answer(req: FastifyRequest, reply: FastifyReply, status: number, message: string, early: boolean) {
  // A refusal before the body is read: on HTTP/1.1 the connection cannot be reused.
  if (early && req.raw.httpVersionMajor === 1) reply.header('connection', 'close');
  return reply.code(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(`${message}\n`);
}

export async function directReceiverRoutes(app: FastifyInstance, o: ReceiverOptions): Promise<void> {
  const { repo, tasks, blobs, jobs, clock, log, directSecrets } = o.deps;
  // The body is read part by part in the handler, after the headers are checked; any other
  // type is handed over unread too, and refused there (415).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  // Never the API's envelope (HTTP 200 with an error code): a box takes any 2xx for "stored".
  // What the handler did not answer itself is a 5xx, which the box sends again.
  app.setErrorHandler((err, req, reply) => {
    const status = statusOf(err);
    if (status && status >= 400 && status < 500) return answer(req, reply, status, messageOf(err), true);
    req.log.error({ err }, 'direct transfer failed');
    reply.header('retry-after', '1');
    return answer(req, reply, 503, `not stored, try again (request id ${req.id})`, true);
  });
  const limits = {
    fieldSize: 256 * 1024,
    fields: 1,
    files: MAX_PAGES_PER_BATCH,
    parts: MAX_PAGES_PER_BATCH + 1,
    fileSize: o.maxPageBytes,
  };

  app.post(
    '/direct/:token',
    { schema: { hide: true }, bodyLimit: MAX_PAGES_PER_BATCH * o.maxPageBytes + 1024 * 1024 },
    async (req, reply) => {
      const { token } = req.params as { token: string };
      try {
        const r = /^[A-Za-z0-9_-]{43}$/.test(token) ? await repo.byToken(repo.db, token) : undefined;
        const task = r ? await tasks.find(tasks.db, r.task_uuid) : undefined;
        if (!r || !task) throw new Refusal(404, 'no recognition task at this address');
        if (Number(task.expires_at) <= clock.now()) throw new Refusal(410, 'this recognition task has expired');
        const scan = r.scan_uuid ? await tasks.find(tasks.db, r.scan_uuid) : undefined;
        const secret = scan ? directSecrets.secretOf(scan) : undefined;
        if (!scan || !secret)
          throw new Refusal(
            403,
            'no scan task sends to this address (give it as options.direct_addr of a scan create)',
          );
        const id = req.headers['webhook-id'];
        const ts = req.headers['webhook-timestamp'];
        const sig = req.headers['webhook-signature'];
        if (typeof id !== 'string' || typeof ts !== 'string' || typeof sig !== 'string')
          throw new Refusal(401, 'missing webhook-id, webhook-timestamp or webhook-signature');
        const tsProblem = checkTimestamp(ts, clock.now());
        if (tsProblem) throw new Refusal(401, `webhook-timestamp: ${tsProblem} (5 minutes either way)`);
        if (
          !String(req.headers['content-type'] ?? '')
            .toLowerCase()
            .startsWith('multipart/form-data')
        )
          throw new Refusal(415, 'the body must be multipart/form-data (boxhub direct v1)');

        const parts = readParts(req.body as Readable, req.headers, limits);
        const first = await parts.next();
        if (first.done || first.value.type !== 'field' || first.value.name !== 'meta')
          throw new Refusal(400, 'the first part must be the manifest, named meta');
        if (first.value.truncated) throw new Refusal(413, `the manifest is larger than ${limits.fieldSize} bytes`);
        const metaText = first.value.value;
        if (!verify(secret, id, ts, sig, metaText))
          throw new Refusal(
            401,
            "bad signature (Standard Webhooks v1 over the meta part, with the scan task's direct_secret)",
          );
        // No encrypted pages: the service reads them (an encrypted scan cannot bind to this address, 30207).
        const m = parseManifest(metaText, { encrypted: false });
        if (typeof m === 'string') throw new Refusal(400, m);
        if (m.scan_uuid !== scan.uuid)
          throw new Refusal(403, `meta.scan_uuid is not the scan bound to this address (${scan.uuid})`);
        if (id !== webhookId(m.scan_uuid, m.batch))
          throw new Refusal(400, `webhook-id must be ${webhookId(m.scan_uuid, m.batch)}`);

        if (m.type === 'scan.end') return await end(req, reply, task, m, id);
        return await pages(req, reply, task, m, id, parts);
      } catch (e) {
        if (e instanceof Refusal) {
          if (e.status >= 400 && e.status !== 404)
            log.info({ token: token.slice(0, 6), status: e.status, reason: e.message }, 'direct transfer refused');
          return answer(req, reply, e.status, e.message, true);
        }
        if (e instanceof PartLimitError) return answer(req, reply, 413, e.message, true);
        // busboy's own complaints: a body that is not well-formed multipart.
        if (e instanceof Error && /multipart|boundary|Unexpected end/i.test(e.message))
          return answer(req, reply, 400, `malformed multipart body: ${e.message}`, true);
        throw e;
      }
    },
  );

  async function end(_req: FastifyRequest, reply: FastifyReply, task: TaskRow, m: EndManifest, id: string) {
    const r = await repo.find(repo.db, task.uuid);
    if (!r) throw new Error(`recognition task '${task.uuid}' has no receiver state`);
    // Again (its answer was lost): the same answer, even once the task has ended on it.
    if (r.end_error !== null) return reply.code(200).send({ duplicate: true, id });
    if (task.state === 'ended') throw new Refusal(410, 'this recognition task has ended');
    // After a stop or a give-up, the end may follow a batch that was never acknowledged (its
    // number is then past the next expected); the totals say what should be here.
    if (m.batch < r.next_batch)
      throw new Refusal(
        409,
        `gap: scan.end came as batch ${m.batch}, but batches up to ${r.next_batch - 1} are stored; the end comes after them`,
      );
    if (m.totals.batches !== r.next_batch - 1 || m.totals.pages !== r.pages_received) {
      throw new Refusal(
        409,
        `gap: scan.end counts ${m.totals.batches} batches and ${m.totals.pages} pages; received ${r.next_batch - 1} batches and ${r.pages_received} pages`,
      );
    }
    await transact(repo.db, async (trx) => {
      if (await repo.end(trx, task.uuid, m.error_code)) {
        await jobs.schedule(trx, { kind: ASSEMBLE_JOB, ref: task.uuid, runAt: clock.now() }, 'earliest');
      }
    });
    return reply.code(200).send({ ended: true, id });
  }

  async function pages(
    _req: FastifyRequest,
    reply: FastifyReply,
    task: TaskRow,
    m: PagesManifest,
    id: string,
    parts: AsyncGenerator<Part>,
  ) {
    const r = await repo.find(repo.db, task.uuid);
    if (!r) throw new Error(`recognition task '${task.uuid}' has no receiver state`);
    if (m.batch < r.next_batch) {
      const before = await repo.batch(repo.db, task.uuid, m.batch);
      if (before?.webhook_id === id) {
        await drain(parts);
        return reply.code(200).send({ duplicate: true, id });
      }
    }
    if (task.state === 'ended') throw new Refusal(410, 'this recognition task has ended');
    if (r.end_error !== null) throw new Refusal(409, 'scan.end was received already; no more batches');
    if (m.batch !== r.next_batch)
      throw new Refusal(409, `gap: batch ${m.batch} came, but the next batch expected is ${r.next_batch}`);
    const tooBig = m.pages.find((p) => p.bytes > o.maxPageBytes);
    if (tooBig)
      throw new Refusal(
        413,
        `page ${tooBig.page_number} has ${tooBig.bytes} bytes; at most ${o.maxPageBytes} are accepted`,
      );
    // Refused before a byte of the images is read when the manifest states it already.
    for (const p of m.pages) {
      const big = pageTooLarge(p.width, p.height);
      if (big) throw new Refusal(413, `page ${p.page_number}: ${big}`);
    }

    const images = new Map<string, Buffer>();
    const want = new Map(m.pages.map((p) => [p.part, p]));
    for await (const part of parts) {
      if (part.type !== 'file') throw new Refusal(400, `part ${part.name} is not an image part`);
      const p = want.get(part.name);
      if (!p || images.has(part.name)) {
        part.stream.resume();
        throw new Refusal(400, `part ${part.name} is not in the manifest (or comes twice)`);
      }
      const buf = await readFile(part, o.maxPageBytes);
      check(p, buf);
      images.set(part.name, buf);
    }
    const missing = m.pages.filter((p) => !images.has(p.part));
    if (missing.length > 0) throw new Refusal(422, `parts missing: ${missing.map((p) => p.part).join(', ')}`);

    // Durable before the answer: files, then the rows and their jobs in one transaction.
    const now = clock.now();
    const rows: NewPage[] = m.pages.map((p, i) => ({
      seq: r.pages_received + i + 1,
      batch: m.batch,
      item_id: p.item_id,
      paper_number: p.paper_number,
      page_number: p.page_number,
      front: p.front,
      blob_key: pageKey(task.uuid, r.pages_received + i + 1),
    }));
    for (const [i, p] of m.pages.entries()) {
      const image = images.get(p.part);
      if (!image) throw new Refusal(422, `parts missing: ${p.part}`); // checked above
      await blobs.put(pageKey(task.uuid, r.pages_received + i + 1), image, { contentType: 'image/jpeg' });
    }
    const stored = await transact(repo.db, async (trx) => {
      if (!(await repo.addBatch(trx, task.uuid, m.batch, id, rows, now))) return false;
      for (const row of rows)
        await jobs.schedule(trx, {
          kind: PAGE_JOB,
          ref: pageJobRef(task.uuid, row.seq),
          runAt: now,
          fairKey: task.uuid,
        });
      return true;
    });
    // Another request recorded this batch meanwhile (a retry racing the first attempt).
    if (!stored) return reply.code(200).send({ duplicate: true, id });
    return reply.code(200).send({ stored: rows.length, id });
  }

  function check(p: DirectPageMeta, buf: Buffer): void {
    if (buf.length !== p.bytes)
      throw new Refusal(422, `part ${p.part}: ${buf.length} bytes, the manifest says ${p.bytes}`);
    const sha = createHash('sha256').update(buf).digest('hex');
    if (sha !== p.sha256)
      throw new Refusal(422, `part ${p.part}: SHA-256 ${sha} does not match the manifest's ${p.sha256}`);
    // The frame header only (nothing decoded): the size the manifest states must be the
    // image's, and within what a page can be (page-pixels.ts).
    const size = jpegSize(buf);
    if (typeof size === 'string') throw new Refusal(422, `part ${p.part} is not a readable JPEG: ${size}`);
    if (size.width !== p.width || size.height !== p.height) {
      throw new Refusal(
        422,
        `part ${p.part}: the image is ${size.width} × ${size.height} pixels, the manifest says ${p.width} × ${p.height}`,
      );
    }
    const big = pageTooLarge(size.width, size.height);
    if (big) throw new Refusal(413, `part ${p.part}: ${big}`);
  }
}

async function drain(parts: AsyncGenerator<Part>): Promise<void> {
  for await (const part of parts) if (part.type === 'file') part.stream.resume();
}
