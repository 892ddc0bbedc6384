// Remote scanning (docs/api.md: "Scanning", "Scan task", "Scan item"; docs/scanning.md). The rules:
// one scan per device at a time (a partial unique index: the insert is the lock); the box
// acknowledges the task at once and then reports items and the end as durable events; stop
// ends the task at once whatever the box does; the task and its files are destroyed at
// expires_at. Every change and the callback it causes commit in one transaction.
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type api,
  ScanError,
  type DirectTransfer,
  type ScanJobOptions,
  type ScanProgressParams,
  type ScanStartParams,
} from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { BoxGateway } from '../../box-link/gateway.ts';
import { RequestRefused } from '../../box-link/requests.ts';
import type { Clock } from '../../clock.ts';
import type { TaskRow } from '../../db/schema.ts';
import type { Trx } from '../../jobs/repository.ts';
import type { BlobStore, StoredBlob } from '../../storage/blob-store.ts';
import type { TaskLifecycle, EndReason } from '../../tasks/lifecycle.ts';
import type { TaskRepository } from '../../tasks/repository.ts';
import { CreateHandshake } from '../../tasks/handshake.ts';
import type { KindWiring } from '../kind-module.ts';
import type { CallbackService } from '../callbacks/service.ts';
import type { DeviceService } from '../devices/service.ts';
import type { E2eKeyService } from '../e2e-keys/service.ts';
import { parseState } from '../devices/view.ts';
import { offlineError } from '../devices/offline.ts';
import { checkScanner, newDirectSecret, resolveScanOptions } from './options.ts';
import type { ScanDirectSecrets } from './direct-secrets.ts';
import type { ScanItemRepository } from './repository.ts';
import { finishEvent, itemDataEvent, scanInfo, scanItem } from './views.ts';
import { RECOGNITION_MAX_DPI } from '../recognition/page-pixels.ts';
import { transact } from '../../db/transaction.ts';

export const ITEMS_PAGE_SIZE = 20;

export interface ScanSettings {
  taskTtlMs: number;
  downloadUrlTtlMs: number;
  uploadUrlTtlMs: number;
  blobMaxBytes: number;
}

export interface ScanServiceDeps {
  tasks: TaskRepository;
  items: ScanItemRepository;
  lifecycle: TaskLifecycle;
  devices: DeviceService;
  e2eKeys: E2eKeyService;
  gateway: BoxGateway;
  callbacks: CallbackService;
  blobs: BlobStore;
  /** Seals the direct-transfer secrets stored with the tasks (and opens them). */
  directSecrets: ScanDirectSecrets;
  clock: Clock;
  log: Logger;
  settings: ScanSettings;
  /** This service's own direct-transfer addresses (recognition tasks): binds a scan to one. */
  directTargets?: DirectTargets;
}

/** A receiver of direct transfers on this service (modules/recognition). */
export interface DirectTargets {
  /** Whether `addr` is one of this service's addresses (always allowed by the URL guard). */
  tokenOf(addr: string): string | undefined;
  /** In scan create's transaction: binds the scan to the address's task, or throws why not. */
  bindScan(trx: Trx, appId: string, addr: string, scanUuid: string): Promise<boolean>;
  /** In the transaction that ends a scan task. */
  scanEnded(trx: Trx, scan: TaskRow, now: number): Promise<void>;
}

/** The error code of a scan the server ends without its box, by why. */
const END_CODES: Record<EndReason, number> = {
  expire: ScanError.expired,
  'box.lost': ScanError.box_lost,
  unbind: ScanError.unbound,
  'box.refused': ScanError.not_acknowledged,
};

const itemKey = (task: string, itemId: number) => `scan/${task}/${itemId}.pdf`;
/** The application key an encrypted scan's items are encrypted to (docs/encryption.md). */
const encryptedTo = (task: Pick<TaskRow, 'options'>): string | undefined =>
  (JSON.parse(task.options) as ScanJobOptions).encrypt?.kid;
/** What an item's file is: a PDF, or its encryption (opaque bytes to everyone but the application). */
const itemType = (task: Pick<TaskRow, 'options'>) =>
  encryptedTo(task)
    ? { ext: 'pdf.enc', contentType: 'application/octet-stream' }
    : { ext: 'pdf', contentType: 'application/pdf' };

export class ScanService {
  private readonly d: ScanServiceDeps;

  private readonly handshake: CreateHandshake;

  constructor(d: ScanServiceDeps) {
    this.d = d;
    this.handshake = new CreateHandshake(d);
  }

  /** The handlers of what the scan kind declares (kind.ts). */
  wiring(): KindWiring {
    return {
      hooks: {
        end: (trx, task, why, now) => this.finish(trx, task, why, END_CODES[why], now),
        dropOnBox: (device, tasks) => this.stopOnBox(device, tasks),
      },
      events: {
        'scan.item': (trx, c) => this.onItem(trx, c.task, c.event.data, c.now, c.checked),
        'scan.finished': (trx, c) => this.onFinished(trx, c.task, c.event.data.error_code, c.now),
      },
      checks: {
        'scan.item': (task, e) => this.storedItem(task, e.data),
      },
      requests: {
        'upload.url': (device, p) => this.uploadUrl(device, p.task, p.item_id, p.size, p.md5),
        'scan.progress': (device, p) => this.onProgress(device, p),
      },
      jobs: [],
    };
  }

  async create(appId: string, body: api.ScanCreateBody): Promise<api.ScanCreateResult> {
    const { job: wanted, callbackUrl, directAddr } = resolveScanOptions(body.options);
    if (callbackUrl) await this.d.callbacks.checkUrl(callbackUrl, 'options.callback_url');
    // An address of this service's own recognition tasks is always allowed (and bound to this
    // scan in the creating transaction); any other goes through the URL guard.
    const ours = directAddr !== undefined && this.d.directTargets?.tokenOf(directAddr) !== undefined;
    if (directAddr !== undefined && !ours) await this.d.callbacks.checkUrl(directAddr, 'options.direct_addr');
    // Recognition must read the pages; an encrypted scan's pages (direct transfer included,
    // docs/encryption.md) are for the application alone.
    if (ours && body.options?.encrypt)
      throw new ApiError(
        'SCAN_ENCRYPTED',
        'options.encrypt: a recognition task must read the pages, so it cannot take an encrypted scan; scan to it without encrypt',
      );
    // Recognition reads up to 600 dpi, and its receiver takes no larger page (page-pixels.ts).
    if (ours && wanted.resolution > RECOGNITION_MAX_DPI) {
      throw new ApiError(
        'INVALID_PARAMETER',
        `options.resolution ${wanted.resolution}: a recognition task reads scans of 100 to ${RECOGNITION_MAX_DPI} dpi (200 is plenty); scan to it at ${RECOGNITION_MAX_DPI} dpi or less`,
      );
    }
    const device = await this.d.devices.bound(appId, body.client_uuid);
    // A create while a task is active answers 30204 with its uuid, whatever else holds (the
    // scanner of an active scan is busy, and that is not the answer docs/api.md, "Scan task" gives).
    const active = await this.d.tasks.activeScan(this.d.tasks.db, device.uuid);
    if (active) throw scanExists(appId, active);
    // The task keeps the key it was created with: a rotation later does not change its items.
    const encrypt = body.options?.encrypt ? await this.d.e2eKeys.forScan(appId) : undefined;
    if (device.online !== 1) throw offlineError(device);
    // A box that reports no key of its own runs an agent without encryption: it would upload
    // the pages as they are, so it is not asked to.
    if (encrypt && !parseState(device)?.e2e_public_key)
      throw new ApiError(
        'E2E_BOX_KEY_MISSING',
        'options.encrypt: this box runs an agent without end-to-end encryption (it reports no key); nothing was scanned',
      );
    const checked = checkScanner(parseState(device)?.scanner, wanted, body.options);
    const job = encrypt ? { ...checked, encrypt } : checked;
    // One secret per task (docs/direct-transfer.md, "Signing"): returned once, given to the box,
    // and stored sealed with the secret box (the recognition receiver reads it back).
    let directSecret: string | undefined;
    if (job.direct) {
      directSecret = newDirectSecret();
      job.direct.secret = directSecret;
    }

    const now = this.d.clock.now();
    const uuid = randomUUID();
    const expiresAt = now + this.d.settings.taskTtlMs;
    const stored = this.d.directSecrets.sealed(job);
    // The box answers at once: it has taken the task (its journal is on its disk) or says why not.
    const params: ScanStartParams = { task: uuid, options: job };
    await this.handshake.run({
      task: {
        uuid,
        kind: 'scan',
        app_id: appId,
        device_uuid: device.uuid,
        callback_url: callbackUrl ?? null,
        options: JSON.stringify(stored),
        created_at: now,
        expires_at: expiresAt,
      },
      // The insert is the lock: the partial unique index refuses a second active scan (30204).
      alsoInTransaction: async (trx) => {
        if (stored.direct) await this.d.directTargets?.bindScan(trx, appId, stored.direct.addr, uuid);
      },
      conflict: async () => {
        const existing = await this.d.tasks.activeScan(this.d.tasks.db, device.uuid);
        // The other task ended between the insert and this read: try once more.
        return existing ? scanExists(appId, existing) : undefined;
      },
      command: 'scan.start',
      params: () => params,
      refusals: { busy: 'SCANNER_BUSY', not_supported: 'SCAN_OPTION_UNSUPPORTED' },
    });
    return { uuid, expires_at: Math.floor(expiresAt / 1000), ...(directSecret ? { direct_secret: directSecret } : {}) };
  }

  /** The direct-transfer options of a scan task, its secret opened (direct-secrets.ts). */
  directOf(task: Pick<TaskRow, 'options'>): DirectTransfer | undefined {
    return this.d.directSecrets.of(task);
  }

  /**
   * Stop (docs/api.md, "Scan task": at once): the task ends now; with the box answering, error code 0.
   * With `onlyTask` (the console's task page) only that task is stopped: when it is no longer
   * the box's active scan nothing is, and the answer is false.
   */
  async stop(appId: string, deviceUuid: string, onlyTask?: string): Promise<boolean> {
    const device = await this.d.devices.bound(appId, deviceUuid);
    const task = await this.d.tasks.activeScan(this.d.tasks.db, device.uuid, appId);
    if (!task) return false;
    if (onlyTask !== undefined && task.uuid !== onlyTask) return false;
    await this.d.tasks.history.add(this.d.tasks.db, task.uuid, {
      at: this.d.clock.now(),
      source: 'server',
      what: 'stop_requested',
    });
    let answered = false;
    if (device.online === 1) {
      try {
        answered = (await this.d.gateway.command(device.uuid, 'scan.stop', { task: task.uuid })).ok;
      } catch {
        /* offline or silent: the task ends on the server alone */
      }
    }
    await transact(this.d.tasks.db, async (trx) => {
      const t = await this.d.tasks.find(trx, task.uuid);
      if (t)
        await this.finish(
          trx,
          t,
          'scan.stop',
          answered ? ScanError.none : ScanError.stopped_unreachable,
          this.d.clock.now(),
        );
    });
    return true;
  }

  async current(appId: string, deviceUuid: string): Promise<api.ScanCurrent> {
    const device = await this.d.devices.bound(appId, deviceUuid);
    const task = await this.d.tasks.activeScan(this.d.tasks.db, device.uuid, appId);
    return task ? { exist: true, scan_uuid: task.uuid } : { exist: false };
  }

  async info(appId: string, deviceUuid: string, scanUuid: string): Promise<api.ScanInfo> {
    return scanInfo(await this.task(appId, deviceUuid, scanUuid));
  }

  async itemData(appId: string, body: api.ItemDataBody): Promise<api.ItemData> {
    const task = await this.task(appId, body.client_uuid, body.scan_uuid);
    const page = body.page ?? 1;
    const { total, rows } = await this.d.items.page(task.uuid, ITEMS_PAGE_SIZE, (page - 1) * ITEMS_PAGE_SIZE);
    const items = await Promise.all(
      rows.map(async (r) =>
        scanItem(r, r.blob_key ? await this.downloadUrl(task, r.item_id) : undefined, encryptedTo(task)),
      ),
    );
    return { scan_uuid: task.uuid, total, page_size: ITEMS_PAGE_SIZE, page, items };
  }

  private async task(appId: string, deviceUuid: string, scanUuid: string): Promise<TaskRow> {
    const device = await this.d.devices.bound(appId, deviceUuid);
    const task = await this.d.tasks.findFor(appId, device.uuid, scanUuid, 'scan');
    // Destroyed at expiry, never created, or another device's: the same answer.
    if (!task)
      throw new ApiError('NOT_FOUND', `no scan task '${scanUuid}' on this device (tasks are destroyed at expires_at)`);
    return task;
  }

  private downloadUrl(task: TaskRow, itemId: number): Promise<string> {
    return this.d.blobs.downloadUrl(itemKey(task.uuid, itemId), {
      fileName: `scan-${task.uuid.slice(0, 8)}-${itemId}.${itemType(task).ext}`,
      contentType: itemType(task).contentType,
      expiresInMs: this.d.settings.downloadUrlTtlMs,
    });
  }

  /** Ends a task (any trigger), records why, sends scan.finish. No-op when it ended already. */
  private async finish(
    trx: Trx,
    task: TaskRow,
    trigger: 'scan.finished' | 'scan.stop' | 'box.refused' | EndReason,
    errorCode: number,
    now: number,
  ): Promise<void> {
    const ended = await this.d.tasks.transition(trx, task, trigger, { error_code: errorCode, finished_at: now });
    if (!ended) return;
    await this.d.directTargets?.scanEnded(trx, ended, now);
    if (ended.callback_url) {
      await this.d.callbacks.enqueue(trx, {
        appId: ended.app_id,
        url: ended.callback_url,
        method: 'POST',
        event: 'scan.finish',
        taskUuid: ended.uuid,
        body: finishEvent(ended, now),
      });
    }
  }

  // ---- the box's side ---------------------------------------------------------------------

  private async uploadUrl(
    device: string,
    taskUuid: string,
    itemId: number,
    size: number,
    md5: string,
  ): Promise<Record<string, unknown>> {
    const task = await this.d.tasks.find(this.d.tasks.db, taskUuid);
    if (!task || task.device_uuid !== device || task.kind !== 'scan')
      throw new RequestRefused(`no scan task ${taskUuid} for this box`);
    if (task.state === 'ended') throw new RequestRefused(`scan task ${taskUuid} has ended`);
    if (size > this.d.settings.blobMaxBytes)
      throw new RequestRefused(
        `item of ${size} bytes is larger than the ${this.d.settings.blobMaxBytes} bytes allowed`,
      );
    // Never past the task's expiry: a file uploaded after task.expire deleted the task's files
    // would belong to nothing and never be deleted.
    const ttl = Math.min(this.d.settings.uploadUrlTtlMs, Number(task.expires_at) - this.d.clock.now());
    if (ttl <= 0) throw new RequestRefused(`scan task ${taskUuid} has expired`);
    const g = await this.d.blobs.uploadUrl(itemKey(taskUuid, itemId), {
      size,
      md5,
      contentType: itemType(task).contentType,
      expiresInMs: ttl,
    });
    return { url: g.url, method: g.method, headers: g.headers, expires_at: g.expiresAt };
  }

  /** The item's file as stored (its size and MD5), read before the event's transaction opens
   *  (EventCheck, box-link/job-events.ts): undefined for an item without a file or an ended task. */
  private async storedItem(
    task: TaskRow,
    data: import('@boxhub/protocol').ScanItemData,
  ): Promise<StoredBlob | undefined> {
    if (task.state === 'ended' || !data.upload) return undefined;
    return this.d.blobs.stat(itemKey(task.uuid, data.item_id));
  }

  private async onItem(
    trx: Trx,
    task: TaskRow,
    data: import('@boxhub/protocol').ScanItemData,
    now: number,
    checked: { value: unknown } | undefined,
  ): Promise<void> {
    // A stopped (or expired) task takes no more items: what the box sends late is dropped.
    if (task.state === 'ended') return;
    let key: string | null = null;
    // An encrypted task's item without a cipher would be a file nobody can open (and the other
    // way round, a cipher nobody asked for): refused like a checksum that does not match.
    if (data.upload && !!encryptedTo(task) !== !!data.upload.cipher) {
      throw new Error(
        `scan item ${task.uuid}/${data.item_id}: the task is ${encryptedTo(task) ? '' : 'not '}encrypted but the item ${data.upload.cipher ? 'has' : 'has no'} cipher`,
      );
    }
    if (data.upload) {
      key = itemKey(task.uuid, data.item_id);
      // Read before this transaction (storedItem); an event whose check did not run (another
      // node applied the event before it, just then) is not applied now: the box sends it again.
      if (!checked) throw new Error(`scan item ${task.uuid}/${data.item_id}: its stored file not read yet`);
      const stored = checked.value as StoredBlob | undefined;
      // The box reports an item only after its upload succeeded; the server records it only
      // when the bytes stored are the ones the box describes.
      if (!stored || stored.size !== data.upload.size || stored.md5 !== data.upload.md5) {
        throw new Error(
          `scan item ${task.uuid}/${data.item_id}: stored ${stored ? `${stored.size} bytes, MD5 ${stored.md5}` : 'nothing'}, the box reports ${data.upload.size} bytes, MD5 ${data.upload.md5}`,
        );
      }
    }
    const row = {
      task_uuid: task.uuid,
      item_id: data.item_id,
      pages: data.pages.length,
      page_list: JSON.stringify(data.pages),
      blob_key: key,
      file_bytes: data.upload?.size ?? null,
      md5: data.upload?.md5 ?? null,
      cipher: data.upload?.cipher ?? null,
      upload_spent_ms: data.upload?.upload_spent_ms ?? null,
      scanned_at: data.scanned_at,
      recorded_at: now,
    };
    await this.d.items.insert(trx, row);
    const pageCount = Number(task.page_count) + data.pages.length;
    await this.d.tasks.update(trx, task.uuid, {
      item_count: Number(task.item_count) + 1,
      page_count: pageCount,
      file_bytes: Number(task.file_bytes) + (data.upload?.size ?? 0),
    });
    // A progress report lost on the way (or a box that sends none) never leaves the pages
    // scanned behind the pages recorded. A conditional update, not the value read above: a
    // progress report may have raised it since (it is not part of this event's transaction).
    await trx
      .updateTable('tasks')
      .set({ scanned_pages: pageCount })
      .where('uuid', '=', task.uuid)
      .where('scanned_pages', '<', pageCount)
      .execute();
    if (task.callback_url) {
      const item = scanItem(row, key ? await this.downloadUrl(task, data.item_id) : undefined, encryptedTo(task));
      await this.d.callbacks.enqueue(trx, {
        appId: task.app_id,
        url: task.callback_url,
        method: 'POST',
        event: 'scan.item_data',
        taskUuid: task.uuid,
        body: itemDataEvent(task, item, now),
      });
    }
  }

  /** Where the box is in the stack (docs/scanning.md, "Progress"): the newest report wins; one
   *  older than what is stored (a reordered message) or for an ended task changes nothing. */
  private async onProgress(device: string, p: ScanProgressParams): Promise<Record<string, unknown>> {
    await this.d.tasks.db
      .updateTable('tasks')
      .set({ scanned_pages: p.pages, skipped_pages: p.skipped, last_page_at: p.at })
      .where('uuid', '=', p.task)
      .where('device_uuid', '=', device)
      .where('kind', '=', 'scan')
      .where('state', '!=', 'ended')
      .where((eb) => eb.or([eb('last_page_at', 'is', null), eb('last_page_at', '<=', p.at)]))
      .where('scanned_pages', '<=', p.pages)
      .execute();
    return {};
  }

  private async onFinished(trx: Trx, task: TaskRow, errorCode: number, now: number): Promise<void> {
    await this.finish(trx, task, 'scan.finished', errorCode, now);
  }

  private async stopOnBox(device: string, tasks: string[]): Promise<void> {
    for (const task of tasks) await this.d.gateway.command(device, 'scan.stop', { task }).catch(() => undefined);
  }
}

/**
 * The answer to a create that meets an active scan (docs/api.md, "Scan task": 30204 with its uuid). Another
 * application's scan (one that unbound the box, its stop still on the way) is not named:
 * nothing of one application's tasks is visible to the next (docs/tasks.md).
 */
function scanExists(appId: string, active: TaskRow): ApiError {
  if (active.app_id !== appId)
    return new ApiError(
      'SCANNER_BUSY',
      'the scanner is still ending a scan of the application this box was bound to before; try again shortly',
    );
  return new ApiError('SCAN_EXISTS', `a scan task is already active on this device: ${active.uuid}`, {
    exist_uuid: active.uuid,
  });
}
