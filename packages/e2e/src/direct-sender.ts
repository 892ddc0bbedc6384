// A sender of boxhub direct v1 requests written from docs/direct-transfer.md alone, for
// testing receivers: each batch a multipart/form-data request (the manifest part `meta` first,
// then the JPEG parts), signed with Standard Webhooks headers over the manifest's exact bytes.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { PageSource } from '@boxhub/recognizer';
import { readJpegHeader } from '@boxhub/protocol/jpeg-header.ts';

export interface DirectPage {
  jpeg: Uint8Array;
  source: PageSource;
}

export function signManifest(secret: string, id: string, ts: number, manifest: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${manifest}`).digest('base64')}`;
}

export function pagesManifest(
  scanUuid: string,
  batch: number,
  pages: readonly DirectPage[],
  clientUuid = 'client',
): Record<string, unknown> {
  return {
    v: 1,
    type: 'pages',
    scan_uuid: scanUuid,
    client_uuid: clientUuid,
    batch,
    pages: pages.map((p, i) => ({
      part: `p${i + 1}`,
      item_id: p.source.item_id,
      paper_number: p.source.paper_number,
      page_number: p.source.page_number,
      front: p.source.front,
      ...sizeOf(p.jpeg),
      dpi: 200,
      content_type: 'image/jpeg',
      bytes: p.jpeg.length,
      sha256: createHash('sha256').update(p.jpeg).digest('hex'),
    })),
  };
}

/** The size the JPEG's frame header states (as a box states it), or A4 at 200 dpi for bytes that are no JPEG. */
function sizeOf(bytes: Uint8Array): { width: number; height: number } {
  try {
    const h = readJpegHeader(bytes);
    return { width: h.width, height: h.height };
  } catch {
    return { width: 1654, height: 2339 };
  }
}

export function endManifest(
  scanUuid: string,
  batch: number,
  totals: { batches: number; pages: number },
  errorCode = 0,
): Record<string, unknown> {
  return { v: 1, type: 'scan.end', scan_uuid: scanUuid, client_uuid: 'client', batch, error_code: errorCode, totals };
}

export interface SendOptions {
  /** Overrides, to send what a broken or hostile sender would. */
  id?: string;
  timestamp?: number;
  signature?: string;
  /** Image parts as sent (default: the pages' JPEGs, named p1..pn). */
  parts?: Array<{ name: string; bytes: Uint8Array }>;
}

export async function sendDirect(
  url: string,
  secret: string,
  manifest: Record<string, unknown>,
  pages: readonly DirectPage[] = [],
  o: SendOptions = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const meta = JSON.stringify(manifest);
  const id = o.id ?? `dt_${String(manifest.scan_uuid)}_${String(manifest.batch)}`;
  const ts = o.timestamp ?? Math.floor(Date.now() / 1000);
  const boundary = `----boxhub${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n${meta}\r\n`,
    ),
  ];
  const parts = o.parts ?? pages.map((p, i) => ({ name: `p${i + 1}`, bytes: p.jpeg }));
  parts.forEach((p, i) => {
    const pageNumber = pages[i]?.source.page_number ?? i + 1;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${pageNumber}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      Buffer.from(p.bytes),
      Buffer.from('\r\n'),
    );
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await request(url, {
    method: 'POST',
    body: Buffer.concat(chunks),
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': o.signature ?? signManifest(secret, id, ts, meta),
      'idempotency-key': id,
      'user-agent': 'boxhub-box/test',
    },
  });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}
