// Feedback-card recognition as a service (docs/api.md, "Feedback-card recognition",
// "Recognition task"; docs/cards.md). A recognition task is a row of the shared task table
// (kind 'recognition': its expiry destroys it with its page images) plus its address: the
// application gives that address to one scan create as options.direct_addr, the box sends the
// pages there (boxhub direct v1, receiver.ts), workers read them (worker.ts) and each student's
// result goes out through the callbacks module.
import { randomUUID } from 'node:crypto';
import { ApiError, type api } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { RecognitionRow, TaskRow } from '../../db/schema.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { TaskKindHooks, TaskLifecycle } from '../../tasks/lifecycle.ts';
import type { TaskRepository } from '../../tasks/repository.ts';
import type { CallbackService, CallbackStatus } from '../callbacks/service.ts';
import type { RecognitionRepository } from './repository.ts';
import type { AnnotatedLinks } from './annotated-links.ts';
import type { ScanDirectSecrets } from '../scan/direct-secrets.ts';
import { transact } from '../../db/transaction.ts';
import { DIRECT_PATH, DIRECT_TOKEN, directAddress, newDirectToken } from './direct-address.ts';

export const ASSEMBLE_JOB = 'recognition.assemble';
/** Students a page of the console's recognition run shows. */
export const RUN_PAGE_SIZE = 50;

/** One student's result as its recognition.result callback carried it, with fresh page links. */
export interface RecognitionStudent {
  /** 1-based, in scan order. */
  index: number;
  callback_id: string;
  callback_status: CallbackStatus;
  error_code: number;
  detail?: string;
  result: { student_id: string; qrcode: string; fills: number[][]; uncertain?: number[][] } | null;
  pages: Array<{ paper_number: number; page_number: number; front: boolean; item_id: number; url?: string }>;
}

/** A recognition task as the console shows it (there is no API read of a recognition task). */
export interface RecognitionRunSummary {
  uuid: string;
  state: string;
  created_at: number;
  finished_at: number | null;
  expires_at: number;
  scan_uuid: string | null;
  pages_received: number;
  students_sent: number;
  /** The box's scan.end error code, once it came. */
  end_error: number | null;
}
export interface RecognitionRun extends RecognitionRunSummary {
  callback_url: string | null;
  /** The device of the bound scan task, when the scan task still exists. */
  scan_device: string | null;
  scan_ended_at: number | null;
  pages_read: number;
  students: { page: number; page_size: number; total: number; rows: RecognitionStudent[] };
}

export const PAGE_JOB = 'recognition.page';

export interface RecognitionSettings {
  taskTtlMs: number;
  downloadUrlTtlMs: number;
  /** After the scan task ends without a scan.end at the address, how long to wait for it
   *  before the transfer counts as broken (1005). */
  endGraceMs: number;
  /** Worker threads of the engine on this node (BOXHUB_RECOGNITION_WORKERS; default: cores). */
  workers?: number;
}

export interface RecognitionServiceDeps {
  tasks: TaskRepository;
  repo: RecognitionRepository;
  lifecycle: TaskLifecycle;
  callbacks: CallbackService;
  jobs: Jobs;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** This service's public base URL (BOXHUB_PUBLIC_URL, or where it listens). */
  publicUrl: () => string;
  /** Opens a scan task's direct-transfer secret (it is stored sealed; modules/scan/direct-secrets.ts). */
  directSecrets: ScanDirectSecrets;
  settings: RecognitionSettings;
  /** Links to each page's annotated image, carried by the result callbacks (review loop). */
  annotated: AnnotatedLinks;
}

/** What the direct-transfer receiver (receiver.ts) works with. */
export type ReceiverDeps = Pick<
  RecognitionServiceDeps,
  'repo' | 'tasks' | 'blobs' | 'jobs' | 'clock' | 'log' | 'directSecrets'
>;
/** What the page and assembly jobs (worker.ts) work with. */
export type WorkerDeps = Pick<
  RecognitionServiceDeps,
  'repo' | 'tasks' | 'blobs' | 'jobs' | 'clock' | 'callbacks' | 'settings' | 'annotated'
>;
/** What the review loop (review.ts) works with. */
export type ReviewDeps = Pick<
  RecognitionServiceDeps,
  'repo' | 'tasks' | 'blobs' | 'clock' | 'callbacks' | 'settings' | 'annotated'
>;

export { DIRECT_PATH } from './direct-address.ts';

export class RecognitionService {
  // Its own: the receiver, the jobs and the review loop get theirs from kind.ts (recognitionDeps).
  private readonly d: RecognitionServiceDeps;

  constructor(d: RecognitionServiceDeps) {
    this.d = d;
  }

  /** The recognition kind's lifecycle hooks: it has no box. */
  hooks(): TaskKindHooks {
    return {
      // Expired before its end: nothing more is sent (the application's task is gone).
      end: async (trx, task, _why, now) => {
        await this.d.tasks.transition(trx, task, 'expire', { finished_at: now });
      },
      dropOnBox: async () => undefined,
    };
  }

  async create(app: { id: string; cap_ess: number }, body: api.EssCreateBody): Promise<api.EssCreateResult> {
    if (!app.cap_ess)
      throw new ApiError(
        'NO_CAPABILITY',
        'this application may not use feedback-card recognition; the operator grants it (ess)',
      );
    await this.d.callbacks.checkUrl(body.callback_url, 'callback_url');
    const uuid = randomUUID();
    const token = newDirectToken();
    const now = this.d.clock.now();
    const expiresAt = now + this.d.settings.taskTtlMs;
    await transact(this.d.tasks.db, async (trx) => {
      await this.d.lifecycle.create(trx, {
        uuid,
        kind: 'recognition',
        app_id: app.id,
        device_uuid: '',
        callback_url: body.callback_url,
        options: '{}',
        created_at: now,
        expires_at: expiresAt,
      });
      await this.d.repo.insert(trx, uuid, token);
    });
    return { uuid, direct_addr: this.address(token), expires_at: Math.floor(expiresAt / 1000) };
  }

  address(token: string): string {
    return directAddress(this.d.publicUrl(), token);
  }

  /**
   * The token part when `addr` points at this service's recognition receiver, else undefined.
   * Compared as the box's HTTP client will send it (docs/direct-transfer.md "This service's
   * receiver"): parsed as a URL (scheme and host case, default port, `.`/`..` segments), the
   * query and fragment left out, the remaining segment percent-decoded as the router decodes
   * it. What comes back need not be a well-formed token: any address that reaches the
   * receiver is ours, and bindScan refuses one that names no open task of the caller.
   */
  tokenOf(addr: string): string | undefined {
    let u: URL;
    let base: URL;
    try {
      u = new URL(addr);
      base = new URL(`${this.d.publicUrl()}${DIRECT_PATH}`);
    } catch {
      return undefined;
    }
    if (u.protocol !== base.protocol || u.host !== base.host || !u.pathname.startsWith(base.pathname)) return undefined;
    const rest = u.pathname.slice(base.pathname.length);
    try {
      return decodeURIComponent(rest);
    } catch {
      return rest;
    }
  }

  /**
   * Scan create, in its transaction: a scan whose direct_addr is a recognition address binds
   * to that task (one recognition task serves exactly one scan). Throws 30402 for an address
   * of no open task of this application, 30401 for one already serving another scan.
   */
  async bindScan(trx: Trx, appId: string, addr: string, scanUuid: string): Promise<boolean> {
    const token = this.tokenOf(addr);
    if (token === undefined) return false;
    const r = DIRECT_TOKEN.test(token) ? await this.d.repo.byToken(trx, token) : undefined;
    const task = r ? await this.d.tasks.find(trx, r.task_uuid) : undefined;
    if (
      !r ||
      !task ||
      task.app_id !== appId ||
      task.state === 'ended' ||
      Number(task.expires_at) <= this.d.clock.now()
    ) {
      throw new ApiError(
        'RECOGNITION_TASK_UNAVAILABLE',
        'options.direct_addr is a recognition address, but of no open recognition task of this application (ended, expired, or never created); create one with POST /api/application/ess/create',
      );
    }
    // A scan the box refused was forgotten (no row): its address may be used again.
    if (r.scan_uuid && r.scan_uuid !== scanUuid && !(await this.d.tasks.find(trx, r.scan_uuid))) {
      await this.d.repo.unbind(trx, r.task_uuid, r.scan_uuid);
      r.scan_uuid = null;
    }
    if (r.scan_uuid && r.scan_uuid !== scanUuid) {
      throw new ApiError(
        'RECOGNITION_TASK_TAKEN',
        `recognition task ${task.uuid} already serves scan ${r.scan_uuid}; one recognition task serves one scan: create a new one for this scan`,
        { scan_uuid: r.scan_uuid },
      );
    }
    if (!(await this.d.repo.bind(trx, task.uuid, scanUuid))) {
      const again = await this.d.repo.find(trx, task.uuid);
      throw new ApiError(
        'RECOGNITION_TASK_TAKEN',
        `recognition task ${task.uuid} already serves scan ${again?.scan_uuid ?? 'another scan'}`,
        { scan_uuid: again?.scan_uuid ?? null },
      );
    }
    if (task.state === 'created')
      await this.d.tasks.transition(trx, task, 'recognition.bound', { acked_at: this.d.clock.now() });
    return true;
  }

  /** The application's recognition tasks, newest first (until they expire). */
  async list(
    appId: string,
    page: number,
  ): Promise<{ page: number; page_size: number; total: number; runs: RecognitionRunSummary[] }> {
    const tasks = await this.d.lifecycle.list(appId, ['recognition'], page);
    const rows = await this.d.repo.many(
      this.d.repo.db,
      tasks.tasks.map((t) => t.uuid),
    );
    return {
      page,
      page_size: tasks.page_size,
      total: tasks.total,
      runs: tasks.tasks.map((t) => summary(t, rows.get(t.uuid))),
    };
  }

  /**
   * One recognition task of this application with its students' results: what the
   * recognition.result callbacks carried (the callback log keeps them), with page links made
   * now (the ones in the callbacks expire). Another application's task is not found.
   */
  async run(appId: string, uuid: string, page: number): Promise<RecognitionRun> {
    const { tasks, repo, callbacks, blobs, settings } = this.d;
    const task = await tasks.find(tasks.db, uuid);
    const r = task && task.app_id === appId && task.kind === 'recognition' ? await repo.find(repo.db, uuid) : undefined;
    if (!task || !r)
      throw new ApiError(
        'NOT_FOUND',
        `no recognition task '${uuid}' in this application (tasks are destroyed at expires_at)`,
      );
    const [heads, sent] = await Promise.all([
      repo.pageHeads(repo.db, uuid),
      callbacks.ofTask(appId, uuid, 'recognition.result', page, RUN_PAGE_SIZE),
    ]);
    const scan = r.scan_uuid ? await tasks.find(tasks.db, r.scan_uuid) : undefined;
    const blobOf = new Map(heads.map((h) => [Number(h.page_number), h.blob_key]));
    const rows = await Promise.all(
      sent.callbacks.map(async (c, i): Promise<RecognitionStudent> => {
        const b = c.body as {
          error_code?: number;
          detail?: string;
          result?: RecognitionStudent['result'];
          pages?: Array<Omit<RecognitionStudent['pages'][number], 'url'>>;
        };
        const pages = await Promise.all(
          (b.pages ?? []).map(async (p) => {
            const key = blobOf.get(Number(p.page_number));
            const url = key
              ? await blobs.downloadUrl(key, {
                  fileName: `page-${p.page_number}.jpg`,
                  contentType: 'image/jpeg',
                  expiresInMs: settings.downloadUrlTtlMs,
                })
              : undefined;
            return {
              paper_number: p.paper_number,
              page_number: p.page_number,
              front: p.front,
              item_id: p.item_id,
              ...(url ? { url } : {}),
            };
          }),
        );
        return {
          index: (page - 1) * RUN_PAGE_SIZE + i + 1,
          callback_id: c.id,
          callback_status: c.status,
          error_code: Number(b.error_code ?? 0),
          ...(b.detail ? { detail: String(b.detail) } : {}),
          result: b.result ?? null,
          pages,
        };
      }),
    );
    return {
      ...summary(task, r),
      callback_url: task.callback_url,
      scan_device: scan && scan.app_id === appId ? scan.device_uuid : null,
      scan_ended_at: r.scan_ended_at === null ? null : Number(r.scan_ended_at),
      pages_read: heads.filter((h) => h.read).length,
      students: { page, page_size: RUN_PAGE_SIZE, total: sent.total, rows },
    };
  }

  /** A scan task ended (any way): its recognition task, if any, finishes once the pages are in. */
  async scanEnded(trx: Trx, scan: TaskRow, now: number): Promise<void> {
    const r = await this.d.repo.byScan(trx, scan.uuid);
    if (!r) return;
    await this.d.repo.scanEnded(trx, r.task_uuid, now);
    // scan.end normally came first (the box sends it before it reports the end); without it,
    // the assembler waits a grace period, then reports the transfer broken.
    await this.d.jobs.schedule(
      trx,
      { kind: ASSEMBLE_JOB, ref: r.task_uuid, runAt: r.end_error === null ? now + this.d.settings.endGraceMs : now },
      'earliest',
    );
  }
}

function summary(
  t: Pick<TaskRow, 'uuid' | 'state' | 'created_at' | 'finished_at' | 'expires_at'>,
  r: RecognitionRow | undefined,
): RecognitionRunSummary {
  return {
    uuid: t.uuid,
    state: t.state,
    created_at: Number(t.created_at),
    finished_at: t.finished_at === null ? null : Number(t.finished_at),
    expires_at: Number(t.expires_at),
    scan_uuid: r?.scan_uuid ?? null,
    pages_received: Number(r?.pages_received ?? 0),
    students_sent: Number(r?.students_sent ?? 0),
    end_error: r?.end_error === null || r?.end_error === undefined ? null : Number(r.end_error),
  };
}
