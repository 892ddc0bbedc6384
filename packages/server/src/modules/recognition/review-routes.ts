// The review loop over the API (docs/cards.md, "The review loop"): boxhub's extension
// endpoints, so an application can build its own review screen. Another application's task
// answers 20404, exactly as a missing one.
import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.ts';
import type { ReviewService } from './review.ts';

const tags = ['recognition'];

export const reviewRoutes: FastifyPluginAsyncTypebox<{ review: ReviewService }> = async (app, { review }) => {
  app.post(
    '/api/application/ess/review/list',
    {
      schema: {
        tags,
        summary:
          'Extension: the students of a recognition task that need review (uncertain areas, errors 1001-1004), with their current result, page links (as scanned and annotated) and corrections',
        body: api.ReviewListBody,
        response: { 200: api.ReviewListResponse },
      },
    },
    async (req) => ok(await review.items(req.application.id, req.body.uuid)),
  );

  app.post(
    '/api/application/ess/review/page',
    {
      schema: {
        tags,
        summary:
          'Extension: one page of a recognition task: every area with its state and score in image pixels, the student-number and QR regions, and 1-hour links to the image and the annotated image',
        body: api.ReviewPageBody,
        response: { 200: api.ReviewPageResponse },
      },
    },
    async (req) => ok(await review.page(req.application.id, req.body.uuid, req.body.page_number)),
  );

  app.post(
    '/api/application/ess/review/correct',
    {
      schema: {
        tags,
        summary:
          "Extension: correct a student's result (areas, student number, sheets that are not a card); recorded with who and when, and sent to the task's callback_url as a new per-student callback with `revision` (30420: corrected meanwhile; 30421: cannot make a result)",
        body: api.ReviewCorrectBody,
        response: { 200: api.ReviewCorrectResponse },
      },
    },
    async (req) =>
      ok(
        await review.correct(
          req.application.id,
          { keyId: req.application.key_id, via: 'api', ...(req.body.reviewer ? { name: req.body.reviewer } : {}) },
          req.body,
        ),
      ),
  );
};
