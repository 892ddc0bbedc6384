// Remote printing (docs/api.md: "Printing", "Print task", "Printer capability"; docs/printing.md). The
// file is fetched (file_url, through the URL guard) or decoded (file_content), checked (its MD5,
// its pages, page sizes and ranges) and stored before anything reaches the box; the box gets a
// short-lived signed URL, never the file over MQTT. The box takes the task at once, queues it
// per printer in creation order, prints it at most once and reports download, start and end as
// durable events; cancel ends every task of the device at once and empties the box's queue.
import { createHash, randomUUID } from 'node:crypto';
import { ApiError, PrintError, type PrintStartParams, type api, type PrintJobOptions } from '@boxhub/protocol';
import { E2E, keyId } from '@boxhub/protocol/e2e.ts';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { BoxGateway } from '../../box-link/gateway.ts';
import { RequestRefused } from '../../box-link/requests.ts';
import type { Clock } from '../../clock.ts';
import type { DeviceRow, TaskRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { EndReason, TaskLifecycle } from '../../tasks/lifecycle.ts';
import type { TaskRepository } from '../../tasks/repository.ts';
import { CreateHandshake } from '../../tasks/handshake.ts';
import type { KindWiring } from '../kind-module.ts';
import type { CallbackService } from '../callbacks/service.ts';
import type { DeviceService } from '../devices/service.ts';
import { parseState } from '../devices/view.ts';
import { offlineError } from '../devices/offline.ts';
import { checkPrintDocument } from './document-check.ts';
import type { WorkGate } from '../../work-gate.ts';
import { decodeBase64, fetchFile } from './fetch-file.ts';
import type { HeldBody } from './inline-body.ts';
import { resolvePrintOptions } from './options.ts';
import { printEvent, printInfo, type PrintEvent } from './views.ts';
import { transact } from '../../db/transaction.ts';
import type { Jobs } from '../../jobs/jobs.ts';
import { CancelCount, COUNT_WAIT_MS } from './cancel-count.ts';

export interface PrintSettings {
  taskTtlMs: number;
  downloadUrlTtlMs: number;
  /** Largest print file, bytes (file_url or file_content). */
  maxFileBytes: number;
  fetchTimeoutMs: number;
  /** How long a cancelled strict print's print.finished waits for the printer's count (cancel-count.ts). */
  countWaitMs?: number;
}

export interface PrintServiceDeps {
  tasks: TaskRepository;
  lifecycle: TaskLifecycle;
  devices: DeviceService;
  gateway: BoxGateway;
  callbacks: CallbackService;
  blobs: BlobStore;
  /** Guarded HTTP client for file_url (net/guarded-agent.ts). */
  fetcher: Dispatcher;
  /** The node-wide bound on document work: PDF checks wait for a slot (work-gate.ts). */
  work: WorkGate;
  clock: Clock;
  log: Logger;
  settings: PrintSettings;
  jobs: Jobs;
}

/** What a print task keeps of its request (tasks.options). */
interface StoredFileCommon {
  format: 'pdf' | 'jpg';
  md5?: string;
  cipher?: string;
  e2e_kid?: string;
}
/** A direct print's file: the box fetches file_url itself. */
interface DirectFile extends StoredFileCommon {
  direct: true;
  url: string;
  key?: undefined;
  size?: undefined;
}
/** A file held in the blob store. */
interface HeldFile extends StoredFileCommon {
  direct?: false;
  key: string;
  size: number;
  md5: string;
  url?: undefined;
}
interface StoredPrint {
  job: PrintJobOptions;
  file: DirectFile | HeldFile;
}

/** The error code of a print task the server ends without its box, by why. */
const END_CODES: Record<EndReason, number> = {
  expire: PrintError.expired,
  'box.lost': PrintError.interrupted,
  unbind: PrintError.unbound,
  'box.refused': PrintError.box_error,
};

const fileKey = (task: string, format: 'pdf' | 'jpg', encrypted: boolean) =>
  `print/${task}/document.${format}${encrypted ? '.enc' : ''}`;

export class PrintService {
  private readonly d: PrintServiceDeps;
  readonly count: CancelCount;
  private readonly handshake: CreateHandshake;

  constructor(d: PrintServiceDeps) {
    this.d = d;
    this.handshake = new CreateHandshake(d);
    this.count = new CancelCount({
      jobs: d.jobs,
      tasks: d.tasks,
      waitMs: d.settings.countWaitMs ?? COUNT_WAIT_MS,
      send: (trx, t, now) => this.notify(trx, t, 'print.finished', now),
    });
  }

  /** The handlers of what the print kind declares (kind.ts). */
  wiring(): KindWiring {
    const d = this.d;
    return {
      hooks: {
        acked: (trx, task, now) => this.notify(trx, task, 'print.ack', now),
        end: (trx, task, why, now, message) => this.end(trx, task, why, END_CODES[why], now, message),
        dropOnBox: (device, tasks) => this.cancelOnBox(device, tasks),
      },
      events: {
        'print.downloaded': async (trx, c) => {
          if (c.task.state === 'ended') return;
          // A direct file was never on the server: its size is the box's (print info `file_size`).
          const direct = Number(c.task.file_bytes) === 0 ? { file_bytes: c.event.data.size } : {};
          await d.tasks.update(trx, c.task.uuid, { download_spent_ms: c.event.data.download_spent_ms, ...direct });
        },
        'print.started': async (trx, c) => {
          const t = await d.tasks.transition(trx, c.task, 'print.started', {
            started_at: c.now,
            pages: c.event.data.pages,
          });
          if (t) await this.notify(trx, t, 'print.started', c.now);
        },
        // Progress is the task's history alone (docs/tasks.md, "History"), recorded with every event.
        'print.progress': async () => undefined,
        'print.finished': async (trx, c) => {
          const e = c.event.data;
          const strict = (JSON.parse(c.task.options) as StoredPrint).job.strict;
          const printed = strict && e.printed_pages !== undefined ? e.printed_pages : null;
          const t = await d.tasks.transition(trx, c.task, 'print.finished', {
            finished_at: c.now,
            error_code: e.error_code,
            error_message: e.message?.slice(0, 500) ?? null,
            printed_pages: printed,
          });
          if (t) {
            await this.notify(trx, t, 'print.finished', c.now);
            return;
          }
          // Ended on the server already (a cancel answers at once): the printer's own count of what
          // it printed before it stopped still belongs to the task; a job that never reached the
          // printer printed nothing.
          const count = printed ?? (strict && c.task.started_at === null ? 0 : null);
          if (count !== null && c.task.printed_pages === null)
            await d.tasks.update(trx, c.task.uuid, { printed_pages: count });
          await this.count.arrived(trx, c.task.uuid, c.now);
        },
      },
      requests: { 'download.url': (device, p) => this.downloadUrl(device, p.task) },
      jobs: [this.count.handler(() => d.clock.now())],
    };
  }

  async capability(appId: string, deviceUuid: string): Promise<import('@boxhub/protocol').PrinterCapability> {
    const device = await this.d.devices.bound(appId, deviceUuid);
    const printer = parseState(device)?.printer;
    if (!printer?.connected) throw new ApiError('PRINTER_NOT_CONNECTED', 'the box reports no printer connected');
    if (printer.capability === null || printer.supported === false)
      throw new ApiError(
        'PRINTER_UNSUPPORTED',
        `the box cannot drive this printer${printer.model ? ` (${printer.make ?? ''} ${printer.model})` : ''}`,
      );
    if (!printer.capability)
      throw new ApiError(
        'PRINTER_UNSUPPORTED',
        "the box has not reported this printer's capability (an older agent, or it is still reading it)",
      );
    return printer.capability;
  }

  /** `held`: the request body's work slot and its file still in the body's bytes (inline-body.ts). */
  async create(appId: string, body: api.PrintCreateBody, held?: HeldBody): Promise<api.PrintCreateResult> {
    const o = body.options ?? {};
    if ((body.file_url === undefined) === (body.file_content === undefined)) {
      throw new ApiError('INVALID_PARAMETER', 'give exactly one of file_url and file_content');
    }
    if (o.cipher !== undefined && !o.encrypt)
      throw new ApiError('INVALID_PARAMETER', 'options.cipher is given but options.encrypt is not true');
    let cipher: string | undefined;
    if (o.encrypt) {
      if (!o.cipher) throw new ApiError('INVALID_PARAMETER', 'options.cipher is required when options.encrypt is true');
      cipher = o.cipher.toLowerCase();
      if (!new RegExp(`^[0-9a-f]{${E2E.cipherHexLength}}$`).test(cipher)) {
        throw new ApiError(
          'INVALID_PARAMETER',
          `options.cipher must be ${E2E.cipherHexLength} hex digits (HPKE enc ‖ sealed content key, docs/encryption.md), not ${o.cipher.length} characters`,
        );
      }
    }
    if (o.direct && body.file_url === undefined)
      throw new ApiError('INVALID_PARAMETER', 'options.direct needs file_url: the box fetches the file itself');
    if (o.callback_url) await this.d.callbacks.checkUrl(o.callback_url, 'options.callback_url');
    if (body.file_url !== undefined) await this.d.callbacks.checkUrl(body.file_url, 'file_url');

    const device = await this.d.devices.bound(appId, body.client_uuid);
    if (device.online !== 1) throw offlineError(device);
    const capability = await this.capability(appId, device.uuid);
    this.checkPrinterReady(device);
    const boxKey = parseState(device)?.e2e_public_key;
    if (cipher && !boxKey)
      throw new ApiError(
        'E2E_BOX_KEY_MISSING',
        'options.encrypt: this box has not reported a public key to encrypt to (an agent without end-to-end encryption); docs/encryption.md',
      );
    const e2e = cipher && boxKey ? { cipher, e2e_kid: keyId(boxKey) } : {};
    const job = resolvePrintOptions(
      { ...o, ...(o.page_ranges !== undefined ? { page_ranges: o.page_ranges } : {}) },
      capability,
    );
    const wantMd5 = body.file_check_sum ? body.file_check_sum.toLowerCase() : undefined;

    const uuid = randomUUID();
    const now = this.d.clock.now();
    const expiresAt = now + this.d.settings.taskTtlMs;
    let stored: StoredPrint;
    let pages: number | undefined;
    // options.direct without file_url was refused above.
    if (o.direct && body.file_url !== undefined) {
      stored = {
        job,
        file: {
          url: body.file_url,
          format: body.file_type,
          direct: true,
          ...(wantMd5 ? { md5: wantMd5 } : {}),
          ...e2e,
        },
      };
    } else {
      const file = await this.storeFile(uuid, body, job, wantMd5, cipher, held);
      pages = file.pages;
      stored = { job, file: { key: file.key, format: body.file_type, size: file.size, md5: file.md5, ...e2e } };
    }

    // The box takes the task at once (queued per printer) or says why not; a cancel that races
    // this create ends the task before the box holds it, and the box drops it.
    await this.handshake.run({
      task: {
        uuid,
        kind: 'print',
        app_id: appId,
        device_uuid: device.uuid,
        callback_url: o.callback_url ?? null,
        options: JSON.stringify(stored),
        created_at: now,
        expires_at: expiresAt,
        ...(stored.file.size ? { file_bytes: stored.file.size } : {}),
      },
      command: 'print.start',
      params: async (): Promise<PrintStartParams> => ({
        task: uuid,
        created_at: now,
        file: await this.boxFile(uuid, stored),
        options: job,
        ...(pages !== undefined ? { pages } : {}),
      }),
      sentDetail: { ...(pages !== undefined ? { pages } : {}), ...(stored.file.direct ? { direct: true } : {}) },
      refusals: { busy: 'DEVICE_BUSY', not_supported: 'PRINTER_UNSUPPORTED' },
      unansweredMessage: 'the box did not acknowledge the task',
      afterRefusal: () => this.d.blobs.deletePrefix(`print/${uuid}`).catch(() => undefined),
    });
    return { uuid, expires_at: Math.floor(expiresAt / 1000) };
  }

  /**
   * The file fetched or decoded, checked and stored. Its own function so that nothing keeps the
   * bytes once it returns (the box round trip after it may take seconds); a large body's work
   * slot goes back here too (docs/configuration.md "Document and image work").
   */
  private async storeFile(
    uuid: string,
    body: api.PrintCreateBody,
    job: PrintJobOptions,
    wantMd5: string | undefined,
    cipher: string | undefined,
    held: HeldBody | undefined,
  ): Promise<{ key: string; size: number; md5: string; pages: number | undefined }> {
    try {
      const bytes =
        body.file_content !== undefined
          ? held
            ? held.decode(body.file_content, this.d.settings.maxFileBytes)
            : decodeBase64(body.file_content, this.d.settings.maxFileBytes)
          : await fetchFile(body.file_url!, this.d.fetcher, {
              maxBytes: this.d.settings.maxFileBytes,
              timeoutMs: this.d.settings.fetchTimeoutMs,
            });
      const md5 = createHash('md5').update(bytes).digest('hex');
      if (wantMd5 && wantMd5 !== md5)
        throw new ApiError('PRINT_CHECKSUM_MISMATCH', `the file's MD5 is ${md5}, file_check_sum says ${wantMd5}`);
      let pages: number | undefined;
      if (cipher) {
        // Encrypted to the box: the server cannot read it and does not try. Page checks are the
        // box's, after decryption; `pages` comes from the box (docs/encryption.md).
        if (bytes.length < E2E.fileOverhead)
          throw new ApiError(
            'PRINT_FILE_INVALID',
            `an encrypted file is at least ${E2E.fileOverhead} bytes (nonce and tag); this one has ${bytes.length}`,
          );
      } else {
        const check = () =>
          checkPrintDocument({
            file: bytes,
            fileType: body.file_type,
            mediaSize: job.media_size,
            copies: job.copies,
            ...(job.page_ranges ? { pageRanges: job.page_ranges } : {}),
            limits: { maxBytes: this.d.settings.maxFileBytes },
          });
        // A PDF is opened by qpdf processes: node-wide, only so many at once (10429 past the
        // queue); a large body already holds its slot. A JPEG's check reads its marker segments only.
        const checked =
          body.file_type === 'pdf' && !held?.lease ? await this.d.work.request('the PDF check', check) : await check();
        pages = checked.pages;
      }
      const key = fileKey(uuid, body.file_type, !!cipher);
      await this.d.blobs.put(key, bytes, {
        contentType: cipher ? 'application/octet-stream' : body.file_type === 'pdf' ? 'application/pdf' : 'image/jpeg',
      });
      return { key, size: bytes.length, md5, pages };
    } finally {
      held?.release();
    }
  }

  /** Print cancel (docs/api.md, "Print task"): every task of the application on the device that the box has received
   *  or is printing ends now with the cancelled code and its callback, and the box empties its
   *  queue (what else it holds is ended already: an earlier application's tasks end when it
   *  unbinds the box, docs/tasks.md). */
  async cancel(appId: string, deviceUuid: string): Promise<void> {
    const device = await this.d.devices.bound(appId, deviceUuid);
    const now = this.d.clock.now();
    const ids = await transact(this.d.tasks.db, async (trx) => {
      const active = await this.d.tasks.active(trx, device.uuid, 'print', appId);
      for (const t of active) await this.end(trx, t, 'print.cancel', PrintError.cancelled, now);
      return active.map((t) => t.uuid);
    });
    // Every task the box holds goes, listed or not: cancel empties the box's print queue.
    if (device.online === 1) await this.cancelOnBox(device.uuid, ids, true);
  }

  async info(appId: string, body: api.PrintInfoBody): Promise<api.PrintInfo> {
    const device = await this.d.devices.bound(appId, body.client_uuid);
    const task = await this.d.tasks.findFor(appId, device.uuid, body.print_uuid, 'print');
    if (!task)
      throw new ApiError(
        'NOT_FOUND',
        `no print task '${body.print_uuid}' on this device (tasks are destroyed at expires_at)`,
      );
    return printInfo(task);
  }

  /** The options a print task was created with, as resolved and sent to the box (the web
   *  console's print task page shows them; the API's print info does not carry them). */
  async job(appId: string, body: api.PrintInfoBody): Promise<{ options: PrintJobOptions; file_type: 'pdf' | 'jpg' }> {
    const device = await this.d.devices.bound(appId, body.client_uuid);
    const task = await this.d.tasks.findFor(appId, device.uuid, body.print_uuid, 'print');
    if (!task)
      throw new ApiError(
        'NOT_FOUND',
        `no print task '${body.print_uuid}' on this device (tasks are destroyed at expires_at)`,
      );
    const stored = JSON.parse(task.options) as StoredPrint;
    return { options: stored.job, file_type: stored.file.format };
  }

  private checkPrinterReady(device: DeviceRow): void {
    const printer = parseState(device)?.printer;
    const code = printer?.error_code ?? 0;
    if (code !== 0) {
      const reasons = printer?.state_reasons?.filter((r) => r !== 'none').join(', ');
      throw new ApiError(
        'PRINTER_ERROR',
        `the printer reports error ${code}${reasons ? ` (${reasons})` : ''}; fix it and try again (docs/errors.md, "Printer error codes")`,
        { printer_error_code: code },
      );
    }
  }

  /** The file as the box fetches it: a fresh signed URL of the stored file, or the direct URL. */
  private async boxFile(task: string, s: StoredPrint): Promise<PrintStartParams['file']> {
    const cipher = s.file.cipher ? { cipher: s.file.cipher } : {};
    if (s.file.direct)
      return {
        url: s.file.url,
        format: s.file.format,
        direct: true,
        ...(s.file.md5 ? { md5: s.file.md5 } : {}),
        ...cipher,
      };
    const expiresAt = this.d.clock.now() + this.d.settings.downloadUrlTtlMs;
    const url = await this.d.blobs.downloadUrl(s.file.key, {
      fileName: `print-${task.slice(0, 8)}.${s.file.format}${s.file.cipher ? '.enc' : ''}`,
      contentType: s.file.cipher
        ? 'application/octet-stream'
        : s.file.format === 'pdf'
          ? 'application/pdf'
          : 'image/jpeg',
      expiresInMs: this.d.settings.downloadUrlTtlMs,
    });
    return { url, url_expires_at: expiresAt, format: s.file.format, md5: s.file.md5, size: s.file.size, ...cipher };
  }

  private async downloadUrl(device: string, taskUuid: string): Promise<Record<string, unknown>> {
    const task = await this.d.tasks.find(this.d.tasks.db, taskUuid);
    if (!task || task.device_uuid !== device || task.kind !== 'print')
      throw new RequestRefused(`no print task ${taskUuid} for this box`);
    if (task.state === 'ended') throw new RequestRefused(`print task ${taskUuid} has ended`);
    const f = await this.boxFile(task.uuid, JSON.parse(task.options) as StoredPrint);
    return { url: f.url, expires_at: f.url_expires_at ?? 0 };
  }

  /** Ends a task (any trigger) with an error code and its print.finished callback. */
  private async end(
    trx: Trx,
    task: TaskRow,
    trigger: 'print.cancel' | 'box.refused' | EndReason,
    code: number,
    now: number,
    message?: string,
  ): Promise<void> {
    // Strict mode: a cancelled task's callback carries printed_pages. Nothing was printed of one
    // the box never took; for one it holds, the callback waits for the printer's count.
    const strictCancel = trigger === 'print.cancel' && (JSON.parse(task.options) as StoredPrint).job.strict;
    const held = task.acked_at !== null;
    const t = await this.d.tasks.transition(trx, task, trigger, {
      finished_at: now,
      error_code: code,
      error_message: message ?? null,
      ...(strictCancel && !held ? { printed_pages: 0 } : {}),
    });
    if (!t) return;
    if (strictCancel && held) await this.count.wait(trx, t, now);
    else await this.notify(trx, t, 'print.finished', now);
  }

  private async notify(trx: Trx, t: TaskRow, event: PrintEvent, now: number): Promise<void> {
    if (!t.callback_url) return;
    await this.d.callbacks.enqueue(trx, {
      appId: t.app_id,
      url: t.callback_url,
      method: 'POST',
      event,
      taskUuid: t.uuid,
      body: printEvent(event, t, now),
    });
  }

  /** Tells the box to drop these tasks (`all`: and every other it holds). */
  private async cancelOnBox(device: string, tasks: string[], all = false): Promise<void> {
    await this.d.gateway
      .command(device, 'print.cancel', { tasks, ...(all ? { all } : {}) })
      .catch((err: unknown) =>
        this.d.log.info(
          { err, device },
          'print.cancel not acknowledged; the box drops the tasks when it next reports its jobs',
        ),
      );
  }
}
