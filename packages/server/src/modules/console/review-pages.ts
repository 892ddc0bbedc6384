// The review loop in the console (docs/console.md, "Review"): one student's pages with what
// was read drawn over them, the correction form (checked with the API's schema and made by the
// same ReviewService.correct the API calls, with this session's key as who), the page images
// behind the overlay, and the annotated image. Another application's run answers 404.
import { api, isApiError } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import { RenderBusy, type Body } from '../recognition/review.ts';
import { confirmed, formOf, idParam, Refused, sess, show, type ConsoleOptions, type Form } from './kit.ts';
import { confirmCorrectionView, studentReviewView, studentUrl } from './review-views.ts';

export interface RecognitionStudentReview {
  uuid: string;
  index: number;
  item: api.ReviewItem | undefined;
  pages: api.ReviewPage[];
  removed: number[];
  current: Body;
  revision: number;
}

/** Refusals shown on the student's page, with the form to try again. */
const FORM_ERRORS = new Set(['INVALID_PARAMETER', 'REVIEW_CORRECTION_INVALID', 'REVIEW_REVISION_CONFLICT']);

function positive(raw: string): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 100000 ? n : 0;
}

/** The form as the API's correct body: every area shown, as ticked; the number when typed anew. */
function correction(uuid: string, student: number, form: Form, current: Body): unknown {
  const areas = (form.shown ?? '')
    .split(',')
    .filter((k) => /^\d+\.\d+$/.test(k))
    .map((k) => {
      const [chapter, index] = k.split('.').map(Number) as [number, number];
      return { chapter, index, filled: form[`a_${chapter}_${index}`] === '1' };
    });
  const typed = (form.student_id ?? '').trim();
  const notACard = Object.keys(form)
    .map((k) => /^nac_(\d+)$/.exec(k))
    .filter((m) => m && form[m[0]] === '1')
    .map((m) => Number(m![1]));
  const reviewer = (form.reviewer ?? '').trim();
  return {
    uuid,
    student,
    revision: Number(form.revision),
    ...(areas.length ? { areas } : {}),
    ...(typed && typed !== current.result?.student_id ? { student_id: typed } : {}),
    ...(notACard.length ? { not_a_card: notACard } : {}),
    ...(reviewer ? { reviewer } : {}),
  };
}

export function reviewPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { review } = o.services;
  type StudentRoute = { Params: { uuid: string; n: string }; Querystring: { msg?: string } };
  type PageRoute = { Params: { uuid: string; n: string } };

  const load = async (req: FastifyRequest, uuid: string, index: number): Promise<RecognitionStudentReview> => {
    const v = await review.studentView(sess(req).appId, uuid, index);
    return {
      uuid,
      index,
      item: v.item,
      pages: v.pages,
      removed: v.removed,
      current: v.student.current,
      revision: v.student.revision,
    };
  };
  const showStudent = async (
    req: FastifyRequest,
    reply: FastifyReply,
    uuid: string,
    index: number,
    error?: string,
    status = 200,
    msg?: string,
  ) =>
    show(
      reply.code(status),
      req,
      `Student ${index}: review`,
      studentReviewView(await load(req, uuid, index), sess(req).csrf, error, msg),
    );

  app.get<StudentRoute>('/console/recognition/:uuid/students/:n', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const index = positive(req.params.n);
    return showStudent(req, reply, uuid, index || 100001, undefined, 200, req.query.msg);
  });

  app.post<StudentRoute>('/console/recognition/:uuid/students/:n/correct', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const index = positive(req.params.n) || 100001;
    const form = formOf(req);
    // Looking the student up first: another application's run is 404, confirmed or not.
    const state = await load(req, uuid, index);
    const action = `${studentUrl(uuid, index)}/correct`;
    if (!confirmed(req)) {
      return show(
        reply,
        req,
        'Are you sure?',
        confirmCorrectionView(
          action,
          studentUrl(uuid, index),
          form,
          `Send the corrected result of student ${index} to the task's callback URL as revision ${state.revision + 1}? The application gets it as a new callback; sheets marked as not a card are left out of this student's result.`,
        ),
      );
    }
    try {
      const body = checkBody(api.ReviewCorrectBody, correction(uuid, index, form, state.current));
      await review.correct(
        sess(req).appId,
        { keyId: req.application.key_id, via: 'console', ...(body.reviewer ? { name: body.reviewer } : {}) },
        body,
      );
    } catch (e) {
      if (!isApiError(e) || !FORM_ERRORS.has(e.key)) throw e;
      return showStudent(req, reply, uuid, index, `${e.message} (code ${e.code})`, 400);
    }
    return reply.redirect(`${studentUrl(uuid, index)}?msg=corrected`, 303);
  });

  app.get<PageRoute>('/console/recognition/:uuid/pages/:n/image', async (req, reply) => {
    const bytes = await review.pageImage(sess(req).appId, idParam(req.params.uuid), positive(req.params.n) || 100001);
    return reply.header('cache-control', 'private, no-store').type('image/jpeg').send(bytes);
  });

  app.get<PageRoute>('/console/recognition/:uuid/pages/:n/annotated', async (req, reply) => {
    let jpeg: Uint8Array;
    try {
      jpeg = await review.annotated({
        appId: sess(req).appId,
        taskUuid: idParam(req.params.uuid),
        pageNumber: positive(req.params.n) || 100001,
      });
    } catch (e) {
      if (e instanceof RenderBusy) throw new Refused(503, e.message);
      throw e;
    }
    return reply.header('cache-control', 'private, no-store').type('image/jpeg').send(Buffer.from(jpeg));
  });
}
