// Feedback-card recognition (docs/api.md, "Feedback-card recognition"; tag `recognition` in
// /openapi.json; docs/cards.md, section 10): recognition tasks and the application's card
// templates, with a helper that starts a scan whose pages are recognized.
import type { CardDefinition } from '@boxhub/protocol/card-definition.ts';
import type { Body, PostResult } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type RecognitionTask = PostResult<'/api/application/ess/create'>;
export type CardTemplate = PostResult<'/api/application/card/template/create'>;
export type ReviewList = PostResult<'/api/application/ess/review/list'>;
export type ReviewItem = ReviewList['items'][number];
export type ReviewPage = PostResult<'/api/application/ess/review/page'>;
export type { CardDefinition };
/** Template creation's body with the definition typed (the API declares it an open object so
 *  that a bad one is answered with every problem at once, 30410). */
export type CardTemplateCreate = Omit<Body<'/api/application/card/template/create'>, 'definition'> & {
  definition: CardDefinition;
};

export class Recognition {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** A recognition task: give its direct_addr to one scan create (20005 without the capability). */
  create(body: Body<'/api/application/ess/create'>, o?: CallOptions) {
    return this.#t.post('/api/application/ess/create', body, o);
  }
  /** A card template from a card definition: its id, a 1-hour PDF link, the layout. */
  createTemplate(body: CardTemplateCreate, o?: CallOptions) {
    return this.#t.post('/api/application/card/template/create', body, o);
  }
  listTemplates(o?: CallOptions) {
    return this.#t.post('/api/application/card/template/list', {}, o);
  }
  templateInfo(body: Body<'/api/application/card/template/info'>, o?: CallOptions) {
    return this.#t.post('/api/application/card/template/info', body, o);
  }
  deleteTemplate(body: Body<'/api/application/card/template/delete'>, o?: CallOptions) {
    return this.#t.post('/api/application/card/template/delete', body, o);
  }

  // The review loop (docs/cards.md, "The review loop"): build a review screen of your own.
  /** The students of a recognition task that need review, with their current result, page links and corrections. */
  reviewItems(body: Body<'/api/application/ess/review/list'>, o?: CallOptions) {
    return this.#t.post('/api/application/ess/review/list', body, o);
  }
  /** One page: every area's state and score in image pixels, the student-number and QR regions, 1-hour image links. */
  reviewPage(body: Body<'/api/application/ess/review/page'>, o?: CallOptions) {
    return this.#t.post('/api/application/ess/review/page', body, o);
  }
  /** The page's annotated image (JPEG bytes): what was read, drawn over the page. */
  async annotatedPage(body: Body<'/api/application/ess/review/page'>, o?: CallOptions): Promise<Uint8Array> {
    const page = await this.reviewPage(body, o);
    return this.#t.download(page.annotated_url, o);
  }
  /** Corrects a student's result; it is recorded and sent to the task's callback_url with `revision`. */
  correct(body: Body<'/api/application/ess/review/correct'>, o?: CallOptions) {
    return this.#t.post('/api/application/ess/review/correct', body, o);
  }

  /**
   * Creates a recognition task and starts a scan on the device whose pages go to it (direct
   * transfer, pages only). Results reach `callbackUrl`, one POST per student, then the PUT end.
   */
  async scanAndRecognize(
    clientUuid: string,
    callbackUrl: string,
    options: Omit<NonNullable<Body<'/api/scan/create'>['options']>, 'direct_mode' | 'direct_addr'> = {},
    o?: CallOptions,
  ): Promise<{ task: RecognitionTask; scan: PostResult<'/api/scan/create'> }> {
    const task = await this.create({ callback_url: callbackUrl }, o);
    const scan = await this.#t.post(
      '/api/scan/create',
      { client_uuid: clientUuid, options: { ...options, direct_mode: 1, direct_addr: task.direct_addr } },
      o,
    );
    return { task, scan };
  }
}
