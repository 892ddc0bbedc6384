// Recognition off the request path, on the shared jobs table (docs/jobs.md), so every server
// node takes part and a page is read once:
//   recognition.page      (ref task:seq)  one page through the engine (worker threads), the
//                                         reading stored once; then the task's assembler is due.
//   recognition.assemble  (ref task)      feeds the task's readings in scan order to the
//                                         engine's StudentAssembler and queues the callback of
//                                         each student not sent yet; at the end, the PUT end
//                                         callback after every result callback has completed.
// The assembly is a function of stored rows (pure data, no images), so any node may run it and
// a crash loses nothing: `students_sent` moves only in the transaction that queues the
// callbacks. A node keeps each task's assembler between runs (TaskAssembly) only as a cache.
import { availableParallelism } from 'node:os';
import {
  RECOGNITION_ERRORS,
  PagePool,
  createLayoutSet,
  type Layout,
  type LayoutSet,
  type PageReading,
} from '@boxhub/recognizer';
import { ScanError, messageOf } from '@boxhub/protocol';
import type { JobHandler } from '../../jobs/runner.ts';
import type { Trx } from '../../jobs/repository.ts';
import { ASSEMBLE_JOB, PAGE_JOB, type WorkerDeps } from './service.ts';
import { TaskAssembly } from './task-assembly.ts';
import type { WorkGate } from '../../work-gate.ts';
import { jpegSize, pageTooLarge } from './page-pixels.ts';

/**
 * A page read makes the task's assembly due this much later, not at once: the pages the engine
 * threads finish meanwhile (one every ~20 ms each at full speed) join that one run (two
 * transactions and the new pages' rows per run: bench/recognition). A student's callback waits
 * at most this much longer;
 * the end of the scan still makes it due at once.
 */
export const ASSEMBLE_COALESCE_MS = 25;

export interface RecognitionWorkerSettings {
  /** Worker threads of the engine on this node (BOXHUB_RECOGNITION_WORKERS; default: cores). */
  workers?: number;
  /** The node-wide bound on document and image work; a page's decoding takes one slot. */
  work?: WorkGate;
}

export class RecognitionWorkers {
  private readonly d: WorkerDeps;
  private readonly size: number;
  private readonly work: WorkGate | undefined;
  private pool: PagePool | undefined;
  /** Per application: its templates' layouts, keyed by the ids they were loaded for. */
  private readonly layouts = new Map<string, { key: string; layouts: Layout[]; set: LayoutSet }>();
  /** Per task: its assembly so far on this node (assembleHandler); the oldest tasks go first. */
  private readonly assemblies = new Map<string, TaskAssembly>();

  constructor(d: WorkerDeps, s: RecognitionWorkerSettings = {}) {
    this.d = d;
    this.size = Math.max(1, s.workers ?? availableParallelism());
    this.work = s.work;
  }

  /** The engine's threads start with the first page, not with the server. */
  private engine(): PagePool {
    this.pool ??= new PagePool({ layouts: [], workers: this.size });
    return this.pool;
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }

  /** The application's layouts (only its own templates are ever matched). */
  private async layoutsOf(appId: string): Promise<{ key: string; layouts: Layout[]; set: LayoutSet }> {
    const { repo } = this.d;
    const ids = await repo.templateIds(repo.db, appId);
    const key = `${appId}:${ids.join(',')}`;
    const cached = this.layouts.get(appId);
    if (cached && cached.key === key) return cached;
    const rows = await repo.templates(repo.db, appId);
    const layouts = rows.map((r) => JSON.parse(r.layout) as Layout);
    const entry = {
      key: `${appId}:${rows
        .map((r) => r.template_id)
        .sort()
        .join(',')}`,
      layouts,
      set: createLayoutSet(layouts),
    };
    this.layouts.set(appId, entry);
    return entry;
  }

  pageHandler(): JobHandler {
    const { repo, tasks, blobs, jobs, clock } = this.d;
    return {
      kind: PAGE_JOB,
      // Two per engine thread: one being read from the store while the other is recognized.
      concurrency: this.size * 2,
      leaseMs: 2 * 60_000,
      run: async (job) => {
        const cut = job.ref.lastIndexOf(':');
        const taskUuid = job.ref.slice(0, cut);
        const seq = Number(job.ref.slice(cut + 1));
        const page = await repo.page(repo.db, taskUuid, seq);
        const task = page ? await tasks.find(tasks.db, taskUuid) : undefined;
        if (!page || !task || page.reading !== null) return { next: 'done' };
        const { key, layouts } = await this.layoutsOf(task.app_id);
        let reading: PageReading;
        try {
          const read = async () => {
            const bytes = await blobs.getBytes(page.blob_key);
            // Never decoded past the page bound (page-pixels.ts), whatever stored it.
            const size = jpegSize(bytes);
            const big = typeof size === 'string' ? undefined : pageTooLarge(size.width, size.height);
            if (big) throw new Error(big);
            // The bytes are this job's alone: moved to the engine's thread, not copied.
            return this.engine().recognize(bytes, { key, layouts }, { transfer: true });
          };
          reading = this.work ? await this.work.background(read) : await read();
        } catch (e) {
          // An image the engine cannot read fails this page (and so its student), not the task.
          reading = {
            status: 'unreadable',
            error_code: RECOGNITION_ERRORS.imageAcquisition,
            detail: `page image could not be read: ${messageOf(e)}`,
            ms: 0,
          };
        }
        // The engine knows only this application's layouts: say so in the application's terms.
        if (reading.status === 'unreadable') {
          const m = /layout ([0-9a-f]{8}) is not loaded/.exec(reading.detail);
          if (m)
            reading = {
              ...reading,
              detail: `the card's layout ${m[1]} is not one of this application's card templates`,
            };
        }
        const text = JSON.stringify(reading);
        return {
          next: 'done',
          effect: async (trx: Trx) => {
            if (await repo.recognized(trx, taskUuid, seq, text, clock.now())) {
              await jobs.schedule(
                trx,
                { kind: ASSEMBLE_JOB, ref: taskUuid, runAt: clock.now() + ASSEMBLE_COALESCE_MS },
                'earliest',
              );
            }
          },
        };
      },
    };
  }

  /** The task's assembly kept on this node, or a fresh one (first run here, other templates,
   *  or, should two runs of one task ever overlap, one of them). */
  private assemblyOf(uuid: string, key: string, set: LayoutSet): TaskAssembly {
    const kept = this.assemblies.get(uuid);
    if (kept && kept.setKey === key && !kept.busy) return kept;
    const fresh = new TaskAssembly(key, set);
    if (kept?.busy) return fresh;
    this.assemblies.delete(uuid);
    const oldest = this.assemblies.keys().next();
    if (this.assemblies.size >= 64 && !oldest.done) this.assemblies.delete(oldest.value);
    this.assemblies.set(uuid, fresh);
    return fresh;
  }

  assembleHandler(): JobHandler {
    const { repo, tasks, blobs, jobs, clock, callbacks, settings, annotated } = this.d;
    return {
      kind: ASSEMBLE_JOB,
      concurrency: 4,
      leaseMs: 60_000,
      run: async (job) => {
        const uuid = job.ref;
        const task = await tasks.find(tasks.db, uuid);
        const r = await repo.find(repo.db, uuid);
        if (!task || !r || task.state === 'ended' || !task.callback_url) {
          this.assemblies.delete(uuid);
          return { next: 'done' };
        }
        const now = clock.now();
        const { key, set } = await this.layoutsOf(task.app_id);
        const a = this.assemblyOf(uuid, key, set);
        a.busy = true;
        let allRead: boolean;
        try {
          allRead = await a.feed(repo, uuid);
        } finally {
          a.busy = false;
        }
        const { results, rowOf } = a;
        const ended = r.end_error !== null;
        const scanEndedAt = r.scan_ended_at === null ? null : Number(r.scan_ended_at);
        const graceUntil = scanEndedAt === null ? null : scanEndedAt + settings.endGraceMs;
        // The scan task ended but its scan.end never came: the transfer broke off (1005).
        // So did one whose box gave up on a batch (scan.end with 2102, direct_transfer_failed).
        const broken =
          (!ended && graceUntil !== null && now >= graceUntil) ||
          Number(r.end_error) === ScanError.direct_transfer_failed;
        const final = allRead && (ended || broken);
        if (final) {
          // The assembler ends here: whatever becomes of this run, the next one starts afresh.
          if (this.assemblies.get(uuid) === a) this.assemblies.delete(uuid);
          const tail = a.asm.end();
          if (broken) {
            const detail =
              "the direct transfer broke off before the end of the scan: this student's pages may be incomplete";
            for (const t of tail)
              results.push({ error_code: RECOGNITION_ERRORS.communication, pages: t.pages, result: null, detail });
          } else {
            results.push(...tail);
          }
        }
        const sentBefore = Number(r.students_sent);
        const fresh = results.slice(sentBefore);
        const bodies = await Promise.all(
          fresh.map(async (s, k) => ({
            uuid,
            finish: final && sentBefore + k === results.length - 1,
            error_code: s.error_code,
            pages: await Promise.all(
              s.pages.map(async (src) => {
                const row = rowOf.get(src);
                return {
                  ...src,
                  temp_download_url: row
                    ? await blobs.downloadUrl(row.blob_key, {
                        fileName: `page-${src.page_number}.jpg`,
                        contentType: 'image/jpeg',
                        expiresInMs: settings.downloadUrlTtlMs,
                      })
                    : '',
                  // Extension: the page with what was read drawn over it (review loop, docs/cards.md).
                  ...(annotated
                    ? {
                        annotated_url: annotated.url(
                          { appId: task.app_id, taskUuid: uuid, pageNumber: src.page_number },
                          settings.downloadUrlTtlMs,
                        ),
                      }
                    : {}),
                };
              }),
            ),
            result: s.result,
            ...(s.detail ? { detail: s.detail } : {}),
          })),
        );
        // Each student's callback waits for the one before it (callbacks module, waitFor), so the
        // application gets them in scan order even when several are due at once; the end waits
        // for the last.
        const group = (k: number) => `recognition:${uuid}:${k}`;
        const waiting = !final && !ended && graceUntil !== null;
        return {
          ...(waiting ? { next: 'again' as const, at: graceUntil } : { next: 'done' as const }),
          effect: async (trx: Trx) => {
            // A recognition task is created with its callback_url.
            const url = (): string => {
              if (!task.callback_url) throw new Error(`recognition task '${uuid}' has no callback_url`);
              return task.callback_url;
            };
            if (bodies.length > 0 || final) {
              if (!(await repo.sent(trx, uuid, sentBefore, results.length))) return;
            }
            for (const [i, body] of bodies.entries()) {
              const k = sentBefore + i;
              await callbacks.enqueue(trx, {
                appId: task.app_id,
                url: url(),
                method: 'POST',
                event: 'recognition.result',
                taskUuid: uuid,
                body,
                group: group(k),
                ...(k > 0 ? { waitFor: group(k - 1) } : {}),
              });
            }
            if (final) {
              await callbacks.enqueue(trx, {
                appId: task.app_id,
                url: url(),
                method: 'PUT',
                event: 'recognition.end',
                taskUuid: uuid,
                body: { uuid, finish: true },
                ...(results.length > 0 ? { waitFor: group(results.length - 1) } : {}),
              });
              await tasks.transition(trx, task, 'recognition.finished', { finished_at: clock.now() });
              return;
            }
            // A page read (or the end) while this run worked: run again.
            const after = await repo.find(trx, uuid);
            if (after && Number(after.progress) !== Number(r.progress))
              await jobs.schedule(
                trx,
                { kind: ASSEMBLE_JOB, ref: uuid, runAt: clock.now() + ASSEMBLE_COALESCE_MS },
                'earliest',
              );
          },
        };
      },
    };
  }
}
