// Feedback-card recognition (docs/api.md, "Feedback-card recognition", "Recognition task") and
// card templates (boxhub's: recognition create carries only a callback URL, so an application
// keeps its card templates here; docs/cards.md).
import Type, { type Static } from 'typebox';
import { CallbackUrl } from './callbacks.ts';
import { RecognitionResultEvent } from './callback-events.ts';
import { Envelope, Id, NullEnvelope } from './envelope.ts';

export const EssCreateBody = Type.Object({ callback_url: CallbackUrl }, { additionalProperties: false });
export type EssCreateBody = Static<typeof EssCreateBody>;
export const EssCreateResult = Type.Object({
  uuid: Type.String({ description: 'recognition task UUID; result callbacks carry it' }),
  direct_addr: Type.String({
    description:
      "give it as options.direct_addr of one scan create (direct_mode 1 or 2): that scan's pages are recognized",
  }),
  expires_at: Type.Integer({ description: 'Unix seconds, about 24 hours after creation' }),
});
export type EssCreateResult = Static<typeof EssCreateResult>;
export const EssCreateResponse = Envelope(EssCreateResult);

/** The card definition (docs/cards.md, "Define a card"); checked by the recognizer's rules. */
export const CardDefinition = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'a card definition as in docs/cards.md: id, title, qrcode, student_number, duplex, chapters',
  },
);

export const CardTemplateCreateBody = Type.Object(
  {
    definition: CardDefinition,
    students: Type.Optional(
      Type.Array(
        Type.Object(
          {
            student_id: Type.String({ minLength: 1, maxLength: 32 }),
            name: Type.Optional(Type.String({ maxLength: 80 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 500, description: 'personalised cards: one card per student, in order, number and name printed' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CardTemplateCreateBody = Static<typeof CardTemplateCreateBody>;

export const CardTemplateView = Type.Object({
  template_id: Type.String({ description: "the template's id (the layout id printed on every side, 8 hex digits)" }),
  card_id: Type.String({ description: "the definition's id" }),
  created_at: Type.Integer({ description: 'Unix ms' }),
  pdf_url: Type.String({ description: 'the printable PDF (A4, print at 100 %), valid 1 hour' }),
  layout: Type.Optional(
    Type.Unknown({ description: 'the layout (boxhub-card-layout v1): where each area, cell and code is, in mm' }),
  ),
});
export type CardTemplateView = Static<typeof CardTemplateView>;
export const CardTemplateResponse = Envelope(CardTemplateView);

export const CardTemplateListBody = Type.Object({}, { additionalProperties: false });
export const CardTemplateList = Type.Object({ templates: Type.Array(CardTemplateView) });
export type CardTemplateList = Static<typeof CardTemplateList>;
export const CardTemplateListResponse = Envelope(CardTemplateList);

export const CardTemplateIdBody = Type.Object({ template_id: Id('template id') }, { additionalProperties: false });
export type CardTemplateIdBody = Static<typeof CardTemplateIdBody>;
export const CardTemplateDeleteResponse = NullEnvelope;

// ---- The review loop (docs/cards.md, "The review loop"): boxhub's extension endpoints. ------

const StudentIndex = Type.Integer({
  minimum: 1,
  maximum: 100000,
  description: "the student's place in the task's scan order, from 1 (the order of its result callbacks)",
});
const AreaStateName = Type.Union([Type.Literal('filled'), Type.Literal('empty'), Type.Literal('uncertain')]);
const Point = Type.Object({ x: Type.Number(), y: Type.Number() });

export const ReviewListBody = Type.Object({ uuid: Id('recognition task uuid') }, { additionalProperties: false });
export type ReviewListBody = Static<typeof ReviewListBody>;

export const ReviewPageLink = Type.Object({
  paper_number: Type.Integer(),
  page_number: Type.Integer(),
  front: Type.Boolean(),
  item_id: Type.Integer(),
  temp_download_url: Type.String({ description: 'the page image as scanned (jpg), valid 1 hour' }),
  annotated_url: Type.String({ description: 'the page image with what was read drawn over it (jpg), valid 1 hour' }),
});
export const ReviewCorrectionView = Type.Object({
  revision: Type.Integer({ description: 'the revision this correction made (1, 2, …)' }),
  created_at: Type.Integer({ description: 'Unix ms' }),
  key_id: Type.String({ description: 'the API key it came with' }),
  via: Type.Union([Type.Literal('api'), Type.Literal('console')]),
  reviewer: Type.Optional(Type.String({ description: 'who, as the application named them' })),
  callback_id: Type.String({ description: "the revision's callback (X-SVC-Callback-ID)" }),
  callback_status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description: 'absent once the callback log no longer keeps it',
    }),
  ),
});
export const ReviewItem = Type.Object({
  student: StudentIndex,
  status: Type.Union([Type.Literal('open'), Type.Literal('resolved')], {
    description:
      'open: the current result still has uncertain areas or an error 1001-1004; resolved: a correction settled it',
  }),
  revision: Type.Integer({ description: "the current revision: 0 is the recognizer's result, each correction adds 1" }),
  reasons: Type.Array(Type.String(), {
    description:
      'why the student needed review, e.g. "error 1001: student number: digit 3: 2 marks", "2 uncertain areas"',
  }),
  error_code: Type.Integer({ description: "the current result's error code" }),
  detail: Type.Optional(Type.String()),
  result: Type.Union([
    Type.Object({
      student_id: Type.String(),
      qrcode: Type.String(),
      fills: Type.Array(Type.Array(Type.Integer())),
      uncertain: Type.Optional(Type.Array(Type.Array(Type.Integer()))),
    }),
    Type.Null(),
  ]),
  pages: Type.Array(ReviewPageLink),
  corrections: Type.Array(ReviewCorrectionView, { description: 'the audit trail, oldest first' }),
});
export type ReviewItem = Static<typeof ReviewItem>;
export const ReviewList = Type.Object({
  uuid: Type.String(),
  state: Type.String({ description: "the task's state: created, received (recognizing), ended" }),
  students: Type.Integer({ description: 'students whose result was sent so far' }),
  items: Type.Array(ReviewItem, { description: 'the students that needed review, in scan order' }),
});
export type ReviewList = Static<typeof ReviewList>;
export const ReviewListResponse = Envelope(ReviewList);

export const ReviewPageBody = Type.Object(
  {
    uuid: Id('recognition task uuid'),
    page_number: Type.Integer({
      minimum: 1,
      maximum: 100000,
      description: 'the page, as pages[].page_number of the result callbacks',
    }),
  },
  { additionalProperties: false },
);
export type ReviewPageBody = Static<typeof ReviewPageBody>;
const Ellipse = {
  cx: Type.Number(),
  cy: Type.Number(),
  rx: Type.Number(),
  ry: Type.Number(),
  angle: Type.Number({ description: 'degrees' }),
};
export const ReviewPage = Type.Object({
  page_number: Type.Integer(),
  student: Type.Union([StudentIndex, Type.Null()], {
    description: 'the student whose result uses this page; null for a page no result uses',
  }),
  width: Type.Integer({ description: 'image pixels' }),
  height: Type.Integer(),
  temp_download_url: Type.String({ description: 'the page image as scanned, valid 1 hour' }),
  annotated_url: Type.String({ description: 'the page with the overlay drawn on it (jpg), valid 1 hour' }),
  located: Type.Boolean({
    description: 'whether the page was located (the overlay needs it); otherwise `detail` says why',
  }),
  detail: Type.Optional(Type.String()),
  areas: Type.Array(
    Type.Object({
      chapter: Type.Integer(),
      index: Type.Integer(),
      state: AreaStateName,
      score: Type.Number({ description: '0 empty … 1 filled, as measured' }),
      ...Ellipse,
    }),
    { description: 'every area of the side, in image pixels, with its current state' },
  ),
  student_number: Type.Union([
    Type.Object({ kind: Type.Union([Type.Literal('bubbles'), Type.Literal('barcode')]), outline: Type.Array(Point) }),
    Type.Null(),
  ]),
  qrcode: Type.Union([Type.Object({ outline: Type.Array(Point) }), Type.Null()]),
});
export type ReviewPage = Static<typeof ReviewPage>;
export const ReviewPageResponse = Envelope(ReviewPage);

export const ReviewCorrectBody = Type.Object(
  {
    uuid: Id('recognition task uuid'),
    student: StudentIndex,
    revision: Type.Integer({
      minimum: 0,
      maximum: 100000,
      description: "the revision this correction is made against (the review item's); 30420 when another came first",
    }),
    areas: Type.Optional(
      Type.Array(
        Type.Object(
          {
            chapter: Type.Integer({ minimum: 1, maximum: 1000 }),
            index: Type.Integer({ minimum: 1, maximum: 1000 }),
            filled: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 10000,
          description: 'areas set by the reviewer: filled or empty; areas not named keep their state',
        },
      ),
    ),
    student_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        pattern: '^[\\x21-\\x7e]+$',
        description: 'the student number, typed by the reviewer',
      }),
    ),
    not_a_card: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 100000 }), {
        maxItems: 100,
        description: "page_numbers of sheets that are not a card (a stray sheet): left out of the student's result",
      }),
    ),
    reviewer: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 80,
        description: "who made the correction, in the application's words; kept in the audit trail",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReviewCorrectBody = Static<typeof ReviewCorrectBody>;
export const ReviewCorrectResult = Type.Object({
  student: Type.Integer(),
  revision: Type.Integer({ description: 'the new revision' }),
  callback_id: Type.String({ description: "the revision's per-student callback, queued to the task's callback_url" }),
  /** That callback's body: the per-student body (docs/api.md) plus `revision`. */
  body: RecognitionResultEvent,
});
export type ReviewCorrectResult = Static<typeof ReviewCorrectResult>;
export const ReviewCorrectResponse = Envelope(ReviewCorrectResult);
