// The teacher's review loop (docs/cards.md, "The review loop"): the students of a recognition
// task that need a person (uncertain areas, errors 1001-1004), each page with what was read
// drawn over it, and corrections. A correction is recorded in the append-only audit trail and
// sent to the task's callback_url as a new per-student callback (the API's body plus
// `revision`) through the callbacks outbox, in the same transaction. The recognizer's result
// stays what its callback carried (the callback log keeps it); revisions are the trail's rows.
// How a correction becomes a result is correction.ts.
import { ApiError, type api } from '@boxhub/protocol';
import {
  RECOGNITION_ERRORS,
  annotatePage,
  cornerHomography,
  imageSize,
  pageOverlay,
  type AreaState,
  type Layout,
  type PageReading,
  type PageSource,
} from '@boxhub/recognizer';
import type { RecognitionCorrectionRow, RecognitionPageRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { transact } from '../../db/transaction.ts';
import type { CallbackStatus } from '../callbacks/service.ts';
import type { AnnotatedLinks, AnnotatedRef } from './annotated-links.ts';
import type { CorrectionRepository } from './review-repository.ts';
import { correctedResult, stateIn, type CorrectionSources, type Fills } from './correction.ts';
import type { ReviewDeps } from './service.ts';

/** Who corrects: the API key the request came with, and how. */
export interface Reviewer {
  keyId: string;
  via: 'api' | 'console';
  name?: string;
}

type Source = PageSource;
/** A per-student callback body (docs/api.md, "Recognition result callback"; docs/cards.md). */
export interface Body {
  uuid: string;
  finish: boolean;
  error_code: number;
  pages: Array<Source & { temp_download_url?: string; annotated_url?: string }>;
  result: Fills | null;
  detail?: string;
  revision?: number;
}

export interface Student {
  /** 1-based, scan order. */
  index: number;
  original: { id: string; status: CallbackStatus; body: Body };
  corrections: RecognitionCorrectionRow[];
  /** The latest revision's body (the original's when there is none). */
  current: Body;
  revision: number;
}

/** The most students a task's review reads at once (a class set is far smaller). */
const MAX_STUDENTS = 5000;
/** Annotated images rendered at once on a node (each decodes and encodes a page). */
const RENDERS = 2;
/** Opens of annotated images waiting for a render on a node; more are answered 503. */
const RENDER_QUEUE = 32;
export class RenderBusy extends Error {
  constructor() {
    super('too many annotated images are being drawn; try again in a few seconds');
  }
}
const REVIEW_CODES: ReadonlySet<number> = new Set([
  RECOGNITION_ERRORS.studentNumber,
  RECOGNITION_ERRORS.qrcode,
  RECOGNITION_ERRORS.chapters,
  RECOGNITION_ERRORS.imageAcquisition,
]);

const key = (chapter: number, index: number) => `${chapter}:${index}`;

/** Why a body needs a person; empty when it does not. */
export function reviewReasons(b: Body): string[] {
  const out: string[] = [];
  if (REVIEW_CODES.has(b.error_code)) out.push(`error ${b.error_code}${b.detail ? `: ${b.detail}` : ''}`);
  const n = (b.result?.uncertain ?? []).reduce((s, c) => s + c.length, 0);
  if (n > 0) out.push(`${n} uncertain area${n === 1 ? '' : 's'}`);
  return out;
}

export class ReviewService {
  private readonly d: ReviewDeps;
  private readonly corrections: CorrectionRepository;
  readonly links: AnnotatedLinks;
  private renders = 0;
  private readonly queue: Array<() => void> = [];

  constructor(d: ReviewDeps, corrections: CorrectionRepository) {
    this.d = d;
    this.corrections = corrections;
    this.links = d.annotated;
  }

  // ---- reading what there is --------------------------------------------------------------

  private async task(appId: string, uuid: string) {
    const { tasks, repo } = this.d;
    const task = await tasks.find(tasks.db, uuid);
    const r = task && task.app_id === appId && task.kind === 'recognition' ? await repo.find(repo.db, uuid) : undefined;
    // Another application's task answers exactly what a missing one does.
    if (!task || !r)
      throw new ApiError(
        'NOT_FOUND',
        `no recognition task '${uuid}' in this application (tasks are destroyed at expires_at)`,
      );
    return task;
  }

  private async students(appId: string, uuid: string): Promise<Student[]> {
    const [sent, rows] = await Promise.all([
      this.d.callbacks.ofTask(appId, uuid, 'recognition.result', 1, MAX_STUDENTS),
      this.corrections.list(this.corrections.db, appId, uuid),
    ]);
    return sent.callbacks.map((c, i) => {
      const mine = rows.filter((r) => Number(r.student) === i + 1);
      const last = mine.at(-1);
      const original = { id: c.id, status: c.status, body: c.body as Body };
      return {
        index: i + 1,
        original,
        corrections: mine,
        current: last ? (JSON.parse(last.body) as Body) : original.body,
        revision: last ? Number(last.revision) : 0,
      };
    });
  }

  private async student(appId: string, uuid: string, index: number): Promise<Student> {
    const s = (await this.students(appId, uuid)).find((x) => x.index === index);
    if (!s)
      throw new ApiError(
        'NOT_FOUND',
        `no student ${index} in recognition task '${uuid}' (students are numbered from 1 in scan order, once their result was sent)`,
      );
    return s;
  }

  private async pageRows(uuid: string): Promise<Map<number, RecognitionPageRow>> {
    const { repo } = this.d;
    return new Map((await repo.pages(repo.db, uuid)).map((p) => [Number(p.page_number), p]));
  }

  private async layoutOf(
    appId: string,
    layoutId: string,
    cache = new Map<string, Layout | null>(),
  ): Promise<Layout | null> {
    const cached = cache.get(layoutId);
    if (cached !== undefined) return cached;
    const t = await this.d.repo.template(this.d.repo.db, appId, layoutId);
    const layout = t ? (JSON.parse(t.layout) as Layout) : null;
    cache.set(layoutId, layout);
    return layout;
  }

  private async sources(appId: string, uuid: string): Promise<CorrectionSources> {
    return { rows: await this.pageRows(uuid), layoutOf: (id, cache) => this.layoutOf(appId, id, cache) };
  }

  private async pageLinks(appId: string, uuid: string, pages: readonly Source[]): Promise<api.ReviewItem['pages']> {
    const { blobs, settings } = this.d;
    const rows = await this.pageRows(uuid);
    return Promise.all(
      pages.map(async (p) => {
        const row = rows.get(Number(p.page_number));
        return {
          paper_number: p.paper_number,
          page_number: p.page_number,
          front: p.front,
          item_id: p.item_id,
          temp_download_url: row
            ? await blobs.downloadUrl(row.blob_key, {
                fileName: `page-${p.page_number}.jpg`,
                contentType: 'image/jpeg',
                expiresInMs: settings.downloadUrlTtlMs,
              })
            : '',
          annotated_url: this.links.url(
            { appId, taskUuid: uuid, pageNumber: p.page_number },
            settings.downloadUrlTtlMs,
          ),
        };
      }),
    );
  }

  /** The students that needed review, in scan order, with their current result and audit trail. */
  async items(appId: string, uuid: string, o: { links?: boolean } = {}): Promise<api.ReviewList> {
    const task = await this.task(appId, uuid);
    const students = await this.students(appId, uuid);
    const statuses = await this.d.callbacks.statuses(
      appId,
      students.flatMap((s) => s.corrections.map((c) => c.callback_id)),
    );
    const items = await Promise.all(
      students
        .filter((s) => reviewReasons(s.original.body).length > 0 || s.revision > 0)
        .map(
          async (s): Promise<api.ReviewItem> => ({
            student: s.index,
            status: reviewReasons(s.current).length > 0 ? 'open' : 'resolved',
            revision: s.revision,
            reasons: reviewReasons(s.original.body),
            error_code: s.current.error_code,
            ...(s.current.detail ? { detail: s.current.detail } : {}),
            result: s.current.result,
            // The console's list polls every second and shows no links: it asks for none.
            pages:
              o.links === false
                ? []
                : await this.pageLinks(
                    appId,
                    uuid,
                    s.current.pages.length > 0 ? s.current.pages : s.original.body.pages,
                  ),
            corrections: s.corrections.map((c) => {
              const status = statuses.get(c.callback_id);
              return {
                revision: Number(c.revision),
                created_at: Number(c.created_at),
                key_id: c.key_id,
                via: c.via === 'console' ? 'console' : 'api',
                ...(c.reviewer ? { reviewer: c.reviewer } : {}),
                callback_id: c.callback_id,
                ...(status !== undefined ? { callback_status: status } : {}),
              };
            }),
          }),
        ),
    );
    return { uuid, state: task.state, students: students.length, items };
  }

  /** One student's current state, for the console's review page. */
  async studentView(
    appId: string,
    uuid: string,
    index: number,
  ): Promise<{ item: api.ReviewItem | undefined; student: Student; pages: api.ReviewPage[]; removed: number[] }> {
    await this.task(appId, uuid);
    const s = await this.student(appId, uuid, index);
    const list = await this.items(appId, uuid, { links: false });
    const shown = s.current.pages.length > 0 ? s.current.pages : s.original.body.pages;
    const pages = await Promise.all(shown.map((p) => this.page(appId, uuid, p.page_number)));
    const kept = new Set(s.current.pages.map((p) => p.page_number));
    return {
      item: list.items.find((i) => i.student === index),
      student: s,
      pages,
      removed: s.original.body.pages.map((p) => p.page_number).filter((n) => !kept.has(n)),
    };
  }

  /** A page image as scanned (the console shows it under its overlay). */
  async pageImage(appId: string, uuid: string, pageNumber: number): Promise<Buffer> {
    await this.task(appId, uuid);
    const row = (await this.pageRows(uuid)).get(pageNumber);
    if (!row) throw new ApiError('NOT_FOUND', `no page ${pageNumber} in recognition task '${uuid}'`);
    return this.d.blobs.getBytes(row.blob_key);
  }

  /** A page's overlay in image pixels, with fresh links; the page's current student's states. */
  async page(appId: string, uuid: string, pageNumber: number): Promise<api.ReviewPage> {
    await this.task(appId, uuid);
    const { located, overlay, detail, student, row, width, height } = await this.overlayOf(
      appId,
      uuid,
      pageNumber,
      true,
    );
    const [links] = await this.pageLinks(appId, uuid, [
      {
        paper_number: Number(row.paper_number),
        page_number: pageNumber,
        front: Number(row.front) === 1,
        item_id: Number(row.item_id),
      },
    ]);
    if (!links) throw new Error(`no links for page ${pageNumber} of recognition task '${uuid}'`);
    return {
      page_number: pageNumber,
      student,
      width,
      height,
      temp_download_url: links.temp_download_url,
      annotated_url: links.annotated_url,
      located,
      ...(detail ? { detail } : {}),
      areas: overlay?.areas ?? [],
      student_number: overlay?.student ? { kind: overlay.student.kind, outline: overlay.student.outline } : null,
      qrcode: overlay?.qrcode ? { outline: overlay.qrcode } : null,
    };
  }

  private async overlayOf(appId: string, uuid: string, pageNumber: number, withSize: boolean) {
    const row = (await this.pageRows(uuid)).get(pageNumber);
    if (!row) throw new ApiError('NOT_FOUND', `no page ${pageNumber} in recognition task '${uuid}'`);
    let width = 0,
      height = 0;
    if (withSize) {
      ({ width, height } = await imageSize(await this.d.blobs.getBytes(row.blob_key)));
    }
    const students = await this.students(appId, uuid);
    const holder =
      students.find((s) => s.current.pages.some((p) => p.page_number === pageNumber)) ??
      students.find((s) => s.original.body.pages.some((p) => p.page_number === pageNumber));
    const removed = holder !== undefined && !holder.current.pages.some((p) => p.page_number === pageNumber);
    const reading = row.reading === null ? null : (JSON.parse(row.reading) as PageReading);
    const base = { row, width, height, student: holder?.index ?? null };
    if (!reading) return { ...base, located: false, overlay: null, detail: 'not read yet' };
    if (reading.status !== 'ok')
      return {
        ...base,
        located: false,
        overlay: null,
        detail: reading.status === 'blank' ? 'a blank page' : reading.detail,
      };
    const h = cornerHomography(reading.corners);
    const layout = await this.layoutOf(appId, reading.layout_id);
    if (!h)
      return {
        ...base,
        located: false,
        overlay: null,
        detail: 'read before the service kept where the page was found: no overlay',
      };
    const side = layout?.sides.find((x) => x.sheet === reading.sheet && x.side === reading.side);
    if (!layout || !side)
      return { ...base, located: false, overlay: null, detail: `the card template ${reading.layout_id} was deleted` };
    const states = new Map<string, { state: AreaState; score: number }>(
      reading.areas.map((a) => [key(a.chapter, a.index), { state: a.state, score: a.score }]),
    );
    const result = holder && !removed ? holder.current.result : null;
    if (result)
      for (const a of side.areas)
        states.set(key(a.chapter, a.index), {
          state: stateIn(result, a.chapter, a.index),
          score: states.get(key(a.chapter, a.index))?.score ?? 0,
        });
    return {
      ...base,
      located: true,
      overlay: pageOverlay(side, h, states),
      detail: removed ? 'marked as not a card' : undefined,
    };
  }

  /** The annotated JPEG a link names (the route checks the link; this checks the task still exists). */
  async annotated(ref: AnnotatedRef): Promise<Uint8Array> {
    await this.task(ref.appId, ref.taskUuid);
    const o = await this.overlayOf(ref.appId, ref.taskUuid, ref.pageNumber, false);
    const bytes = await this.d.blobs.getBytes(o.row.blob_key);
    return this.bounded(() =>
      annotatePage(bytes, o.overlay, o.detail ? `page ${ref.pageNumber}: ${o.detail}` : undefined),
    );
  }

  private async bounded<T>(f: () => Promise<T>): Promise<T> {
    if (this.renders >= RENDERS) {
      // A link is a credential, but a burst of opens must not queue without end on one node.
      if (this.queue.length >= RENDER_QUEUE) throw new RenderBusy();
      await new Promise<void>((go) => this.queue.push(go));
    }
    this.renders++;
    try {
      return await f();
    } finally {
      this.renders--;
      this.queue.shift()?.();
    }
  }

  // ---- corrections ------------------------------------------------------------------------

  async correct(appId: string, who: Reviewer, body: api.ReviewCorrectBody): Promise<api.ReviewCorrectResult> {
    const { callbacks, clock } = this.d;
    const task = await this.task(appId, body.uuid);
    const s = await this.student(appId, body.uuid, body.student);
    if (body.revision !== s.revision) {
      throw new ApiError(
        'REVIEW_REVISION_CONFLICT',
        `student ${s.index} is at revision ${s.revision}, not ${body.revision}: another correction came first; fetch the review items again`,
        { revision: s.revision },
      );
    }
    const invalid = (why: string) => new ApiError('REVIEW_CORRECTION_INVALID', `student ${s.index}: ${why}`);
    if (!body.areas?.length && body.student_id === undefined && !body.not_a_card?.length)
      throw invalid('nothing to correct: give areas, student_id or not_a_card');
    const dropped = new Set(body.not_a_card ?? []);
    for (const n of dropped)
      if (!s.current.pages.some((p) => p.page_number === n))
        throw invalid(
          `page ${n} is not one of this student's pages (${s.current.pages.map((p) => p.page_number).join(', ') || 'none left'})`,
        );
    const pages: Source[] = s.current.pages
      .filter((p) => !dropped.has(p.page_number))
      .map((p) => ({ paper_number: p.paper_number, page_number: p.page_number, front: p.front, item_id: p.item_id }));
    const revision = s.revision + 1;
    let next: Body;
    if (pages.length === 0) {
      if (body.areas?.length || body.student_id !== undefined)
        throw invalid('every page is marked as not a card: there are no areas or student number left to set');
      next = {
        uuid: task.uuid,
        finish: false,
        error_code: RECOGNITION_ERRORS.noPageData,
        pages: [],
        result: null,
        detail: 'every sheet was marked as not a card by a reviewer',
        revision,
      };
    } else {
      next = {
        uuid: task.uuid,
        finish: false,
        error_code: 0,
        pages,
        result: await correctedResult(await this.sources(appId, body.uuid), body, s.current.result, pages, invalid),
        revision,
      };
    }
    const row: RecognitionCorrectionRow = {
      task_uuid: task.uuid,
      app_id: appId,
      student: s.index,
      revision,
      key_id: who.keyId,
      via: who.via,
      reviewer: who.name ?? null,
      created_at: clock.now(),
      correction: JSON.stringify({
        ...(body.areas?.length ? { areas: body.areas } : {}),
        ...(body.student_id !== undefined ? { student_id: body.student_id } : {}),
        ...(body.not_a_card?.length ? { not_a_card: body.not_a_card } : {}),
      }),
      body: JSON.stringify(next),
      callback_id: '',
    };
    const sent = { ...next, pages: await this.pageLinks(appId, task.uuid, pages) };
    // Each revision waits for the student's earlier callback (the recognizer's, then the
    // previous revision), so a receiver never gets an older result after a newer one.
    const k = s.index - 1;
    const group = (r: number) => (r === 0 ? `recognition:${task.uuid}:${k}` : `recognition:${task.uuid}:${k}:r${r}`);
    // A recognition task is created with its callback_url (the students' results went there).
    const url = task.callback_url;
    if (!url) throw new Error(`recognition task '${task.uuid}' has no callback_url`);
    try {
      await transact(this.corrections.db, async (trx) => {
        row.callback_id = await callbacks.enqueue(trx, {
          appId,
          url,
          method: 'POST',
          event: 'recognition.revision',
          taskUuid: task.uuid,
          body: sent,
          group: group(revision),
          waitFor: group(s.revision),
        });
        await this.corrections.insert(trx, row);
      });
    } catch (e) {
      if (isUniqueViolation(e))
        throw new ApiError(
          'REVIEW_REVISION_CONFLICT',
          `student ${s.index} was corrected meanwhile: fetch the review items again`,
          { revision },
        );
      throw e;
    }
    return { student: s.index, revision, callback_id: row.callback_id, body: sent };
  }
}
