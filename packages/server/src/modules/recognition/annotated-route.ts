// GET {public URL}/recognition/annotated/{token}.jpg: a page with what was read drawn over it
// (docs/cards.md, "The review loop"). Outside API-key auth and the envelope, like the blob
// store's signed links: the sealed token is the credential (annotated-links.ts), and the
// answers are plain HTTP statuses, since the callers are browsers and image viewers.
import { ApiError } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { RenderBusy, type ReviewService } from './review.ts';

function plain(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(`${message}\n`);
}

export async function annotatedRoute(app: FastifyInstance, o: { review: ReviewService }): Promise<void> {
  // A wildcard, not a parameter: the token is longer than a route parameter may be.
  app.get<{ Params: { '*': string } }>('/recognition/annotated/*', { schema: { hide: true } }, async (req, reply) => {
    const m = /^([A-Za-z0-9_-]+)\.jpg$/.exec(req.params['*']);
    const ref = m ? o.review.links.open(m[1]!) : undefined;
    if (ref === 'expired') return plain(reply, 403, 'this link has expired');
    if (!ref) return plain(reply, 403, 'bad link');
    try {
      const jpeg = await o.review.annotated(ref);
      return reply
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .type('image/jpeg')
        .send(Buffer.from(jpeg));
    } catch (e) {
      // The task expired (destroyed with its pages) since the link was made.
      if (e instanceof ApiError && e.key === 'NOT_FOUND') return plain(reply, 404, 'not found');
      if (e instanceof RenderBusy) return plain(reply.header('retry-after', '5'), 503, e.message);
      req.log.error({ err: e }, 'annotated page image failed');
      return plain(reply, 500, `internal error (request id ${req.id})`);
    }
  });
}
