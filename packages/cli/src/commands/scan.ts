// `boxhub scan --device DEVICE [options]`: scans on a box, shows the pages and items as they
// come (scan/info's scanned_pages: docs/scanning.md, "Progress"), downloads each item's PDF as
// soon as it is recorded and checks its MD5. Ctrl-C stops the scan and keeps every item the
// service recorded (docs/cli.md, "boxhub scan").
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Boxhub, ScanInfo, ScanItem } from '@boxhub/sdk';
import { common, defineCommand, intFlag } from '../command.ts';
import { connect, connectionFlags, deviceUuid } from '../connection.ts';
import { EXIT, Failed, UsageError } from '../exit.ts';
import { emit, Interrupt, pageBar, Progress } from '../progress.ts';

export const command = defineCommand({
  summary: 'scan on a box and download the PDFs',
  usage: '--device DEVICE [options]',
  description:
    "Starts a scan on the box, shows each page as it is scanned and each item as it is recorded,\ndownloads each item's PDF as soon as it is recorded and checks its MD5. A long stack comes in\nitems of --item-pages pages, or of what --item-seconds scanned (docs/scanning.md). Ctrl-C stops\nthe scan on the box and still downloads and checks every item the service recorded (exit 130);\nthe pages of the item being made when it stopped are not kept. A second Ctrl-C exits at once.",
  flags: {
    device: common.device,
    duplex: { type: 'boolean', help: 'both sides (the default when the scanner has a duplex feeder)' },
    simplex: { type: 'boolean', help: 'one side' },
    resolution: { type: 'string', arg: 'N', help: 'dpi: 100, 150, 200 (default), 240, 300, 400, 600, 1200' },
    color: { type: 'boolean', help: 'colour (the default)' },
    gray: { type: 'boolean', help: 'black and white' },
    quality: { type: 'string', arg: 'N', help: 'JPEG quality 1-100 (default 90)' },
    'keep-blank': { type: 'boolean', help: 'keep blank pages (they are skipped by default)' },
    continuous: {
      type: 'string',
      arg: 'SEC',
      help: 'continuous mode: wait SEC seconds for more paper (0: until Ctrl-C)',
    },
    'item-pages': { type: 'string', arg: 'N', help: 'at most N pages an item (1-200, default 20)' },
    'item-seconds': {
      type: 'string',
      arg: 'SEC',
      help: 'close an item at the end of a sheet once it is SEC seconds old\n(0-3600, default 3; 0: by pages only)',
    },
    out: { type: 'string', arg: 'DIR', help: 'where the PDFs go (default ./scans/<scan uuid>)' },
    encrypt: {
      type: 'boolean',
      help: "end-to-end encryption: the box encrypts each item to the application's\nregistered key; the encrypted files are saved as item-N.pdf.enc",
    },
    'decrypt-key': {
      type: 'string',
      arg: 'FILE',
      help: "with --encrypt: the application's private key (64 hex digits, or JSON\nwith private_key) to decrypt each item to item-N.pdf (docs/encryption.md)",
    },
    timeout: {
      ...common.timeout,
      help: 'give up after SEC seconds: the scan is stopped, what was scanned is\nsaved, exit 1 (default: wait for the end)',
    },
    ...connectionFlags,
    json: common.json,
  },
  json: '{scan_uuid, client_uuid, error_code, total_pages, scanned_pages, skipped_pages, out, items: [{item_id, pages, path, bytes, md5}], interrupted, timed_out}',
  examples: [
    'boxhub scan --device BX0042',
    'boxhub scan --device BX0042 --simplex --resolution 300 --gray --out scans/',
    'boxhub scan --device BX0042 --continuous 0          # until Ctrl-C',
    'boxhub scan --device BX0042 --item-pages 50 --item-seconds 0',
    "boxhub scan --device BX0042 --json | jq -r '.items[].path'",
  ],
  async run(ctx) {
    const values = ctx.values;
    if (values.duplex && values.simplex) throw new UsageError('--duplex and --simplex are exclusive');
    if (values.color && values.gray) throw new UsageError('--color and --gray are exclusive');
    const resolution = intFlag('resolution', values.resolution, 100, 1200);
    const quality = intFlag('quality', values.quality, 1, 100);
    const wait = intFlag('continuous', values.continuous, 0, 86400);
    const timeout = intFlag('timeout', values.timeout, 1, 7 * 86400);
    const itemPages = intFlag('item-pages', values['item-pages'], 1, 200);
    const itemSeconds = intFlag('item-seconds', values['item-seconds'], 0, 3600);
    if (values['decrypt-key'] && !values.encrypt) throw new UsageError('--decrypt-key goes with --encrypt');
    const privateKey = values['decrypt-key'] ? await readKey(values['decrypt-key']) : undefined;
    const boxhub = await connect(ctx);
    const progress = new Progress({ json: ctx.json });
    // Ctrl-C is taken from the start: one while the task is being created stops it as soon as
    // it exists, rather than leaving the box scanning with nobody to collect the pages.
    let stopScan: (() => Promise<unknown>) | undefined;
    const interrupt = new Interrupt(() => {
      progress.line(
        stopScan
          ? 'stopping the scan… (Ctrl-C again exits at once)'
          : 'stopping as soon as the scan has started… (Ctrl-C again exits at once)',
      );
      void stopScan?.();
    });
    try {
      const client_uuid = await deviceUuid(boxhub, values.device);
      const options = {
        ...(values.duplex ? { duplex: true } : values.simplex ? { duplex: false } : {}),
        ...(resolution !== undefined ? { resolution: resolution as 200 } : {}),
        ...(values.gray ? { color_type: 1 as const } : {}),
        ...(quality !== undefined ? { quality } : {}),
        ...(values['keep-blank'] ? { blank_page_skip: false } : {}),
        ...(wait !== undefined ? { continuous: true, continuous_wait: wait } : {}),
        ...(values.encrypt ? { encrypt: true } : {}),
        ...(itemPages !== undefined ? { item_pages: itemPages } : {}),
        ...(itemSeconds !== undefined ? { item_seconds: itemSeconds } : {}),
      };
      progress.status('starting the scan…');
      const created = await boxhub.scan.create({ client_uuid, options });
      const scan_uuid = created.uuid;
      if (!scan_uuid) throw new Failed('the service created the scan task but gave no uuid');
      const out = resolve(values.out ?? join('scans', scan_uuid));
      await mkdir(out, { recursive: true });
      progress.line(`scan ${scan_uuid} started on ${client_uuid}; PDFs go to ${out}`);
      stopScan = () => boxhub.scan.stop({ client_uuid }).catch(() => undefined);
      if (interrupt.interrupted) await stopScan();
      const files: Array<{ item_id: number; pages: number; path: string; bytes: number; md5: string }> = [];
      const fetched = new Set<number>();
      // Downloads run one after another, in item order, while the scan goes on.
      let downloads: Promise<void> = Promise.resolve();
      const fetchNew = () => {
        downloads = downloads.then(async () => {
          for await (const item of boxhub.scan.items({ client_uuid, scan_uuid })) {
            if (fetched.has(item.item_id)) continue;
            fetched.add(item.item_id);
            const saved = await save(boxhub, item, out, scan_uuid, privateKey);
            files.push(saved);
            progress.line(
              `item ${item.item_id}: ${item.pages} page${item.pages === 1 ? '' : 's'}, ${item.file_size ?? 0} KB, MD5 checked${item.cipher ? (privateKey ? ', decrypted' : ', encrypted') : ''} → ${saved.path}`,
            );
          }
        });
        return downloads;
      };
      let timedOut = false;
      let info: ScanInfo | undefined;
      try {
        info = await boxhub.scan.waitForFinish(
          { client_uuid, scan_uuid },
          {
            intervalMs: 500,
            ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
            onProgress: (i) => {
              info = i;
              progress.update(scanLine(i, progress.tty));
              if (i.item_size > fetched.size) fetchNew().catch(() => undefined);
            },
          },
        );
      } catch (e) {
        if (!(e instanceof Error && e.name === 'WaitTimeoutError')) throw e;
        timedOut = true;
        progress.line(`no end after ${timeout} s: stopping the scan`);
        await stopScan();
      }
      interrupt.dispose();
      await fetchNew();
      progress.done();
      const error_code = info?.error_code ?? 0;
      const total_pages = info?.total_pages ?? 0;
      const scanned = info?.scanned_pages ?? total_pages;
      const result = {
        scan_uuid,
        client_uuid,
        error_code,
        total_pages,
        scanned_pages: scanned,
        skipped_pages: info?.skipped_pages ?? 0,
        out,
        items: files,
        interrupted: interrupt.interrupted,
        timed_out: timedOut,
      };
      // Pages scanned into an item that was never recorded (the stop dropped it): said, not hidden.
      const lost =
        scanned > total_pages ? ` (${scanned - total_pages} more scanned into an item the stop dropped)` : '';
      const saved = `${total_pages} page${total_pages === 1 ? '' : 's'} in ${files.length} PDF${files.length === 1 ? '' : 's'} in ${out}${lost}`;
      emit(
        ctx.json,
        result,
        timedOut
          ? `timed out after ${timeout} s, scan stopped: ${saved}`
          : error_code !== 0
            ? `ended with scan error ${error_code} (docs/errors.md): ${saved}`
            : interrupt.interrupted
              ? `stopped: ${saved}`
              : `done: ${saved}`,
      );
      if (interrupt.interrupted) return EXIT.interrupted;
      return error_code === 0 && !timedOut ? EXIT.ok : EXIT.failed;
    } finally {
      interrupt.dispose();
      progress.done();
    }
  },
});

/** The progress line: pages as the box scans them, and what of them is in recorded items. */
function scanLine(i: ScanInfo, tty: boolean): string {
  const scanned = i.scanned_pages ?? i.total_pages;
  const skipped = i.skipped_pages ? ` (${i.skipped_pages} blank skipped)` : '';
  const text = `scanning: ${scanned} page${scanned === 1 ? '' : 's'} scanned${skipped}, ${i.total_pages} in ${i.item_size} item${i.item_size === 1 ? '' : 's'}${i.finished ? ', done' : ''}`;
  return tty ? `${pageBar(scanned, i.total_pages)} ${text}` : text;
}

async function save(boxhub: Boxhub, item: ScanItem, dir: string, scanUuid: string, privateKey: string | undefined) {
  const pdf = join(dir, `item-${item.item_id}.pdf`);
  if (!item.cipher) return { item_id: item.item_id, pages: item.pages, ...(await boxhub.scan.download(item, pdf)) };
  // Encrypted (docs/encryption.md): the download is checked against its MD5, then decrypted.
  const r = await boxhub.scan.download(item, `${pdf}.enc`);
  if (!privateKey) return { item_id: item.item_id, pages: item.pages, ...r };
  const { decryptScanItemFile } = await import('@boxhub/sdk');
  await decryptScanItemFile({ privateKey, scanUuid, item, path: r.path, out: pdf });
  await rm(r.path, { force: true });
  return { item_id: item.item_id, pages: item.pages, ...r, path: pdf };
}

/** `private_key` of the key file's JSON (text that starts with `{`: an object, or not JSON at all). */
function privateKeyField(json: unknown): unknown {
  return typeof json === 'object' && json !== null && 'private_key' in json ? json.private_key : undefined;
}

/** The application's private key from a file: 64 hex digits, or JSON with `private_key`. */
async function readKey(path: string): Promise<string> {
  const text = (
    await readFile(path, 'utf8').catch(() => {
      throw new UsageError(`cannot read --decrypt-key ${path}`);
    })
  ).trim();
  const key = text.startsWith('{') ? String(privateKeyField(JSON.parse(text)) ?? '') : text;
  if (!/^[0-9a-fA-F]{64}$/.test(key))
    throw new UsageError(`--decrypt-key ${path} holds no private key (64 hex digits, or JSON with private_key)`);
  return key.toLowerCase();
}
