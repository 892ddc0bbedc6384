// End-to-end encryption helpers (docs/encryption.md): an application's key pair, a print file
// encrypted to a box, a scan item decrypted. The scheme itself is @boxhub/protocol's e2e.ts,
// the one implementation the box and the server use too.
import { createHash } from 'node:crypto';
import {
  E2eError,
  e2eInfo,
  generateKeyPair,
  keyId,
  openBuffer,
  sealBuffer,
  type E2eKeyPair,
} from '@boxhub/protocol/e2e.ts';
import { openFile, sealFile } from './e2e-files.ts';

export { E2eError, generateKeyPair, keyId, type E2eKeyPair };

export interface EncryptedPrintFile {
  /** The encrypted bytes: send as file_content (Base64) or serve at file_url. */
  file: Buffer;
  /** options.cipher */
  cipher: string;
  /** file_check_sum: the MD5 of the encrypted bytes. */
  checkSum: string;
}

/**
 * Encrypts a print file to a box: `boxPublicKey` is the device's `e2e_public_key` from
 * devices.info (compare its `e2e_kid` with the one the box shows), `clientUuid` its uuid.
 * Create the task with `options: { encrypt: true, cipher }` and `file_check_sum: checkSum`.
 */
export async function encryptForBox(o: {
  file: Uint8Array;
  boxPublicKey: string;
  clientUuid: string;
}): Promise<EncryptedPrintFile> {
  const { file, cipher } = await sealBuffer(o.boxPublicKey, e2eInfo.print(o.clientUuid), o.file);
  return { file, cipher, checkSum: createHash('md5').update(file).digest('hex') };
}

/** The same for a file on disk, streamed: the encrypted file is written to `out`. */
export async function encryptFileForBox(o: {
  path: string;
  out: string;
  boxPublicKey: string;
  clientUuid: string;
}): Promise<{ cipher: string; checkSum: string; size: number }> {
  const r = await sealFile(o.path, o.out, o.boxPublicKey, e2eInfo.print(o.clientUuid));
  return { cipher: r.cipher, checkSum: r.md5, size: r.size };
}

/** What decryptScanItem needs of an item (scan.itemData's items, or a scan.item_data callback). */
export interface EncryptedItem {
  item_id: number;
  cipher?: string;
  check_sum?: string;
}

/**
 * Decrypts a scan item's downloaded bytes (scan.download or its temp_download_url) with the
 * application's private key: checks the MD5 first when the item has one, then opens the cipher
 * for this task and item and the file's GCM tag. Throws E2eError when anything does not match.
 */
export async function decryptScanItem(o: {
  privateKey: string;
  scanUuid: string;
  item: EncryptedItem;
  data: Uint8Array;
}): Promise<Buffer> {
  if (!o.item.cipher) throw new E2eError(`item ${o.item.item_id} is not encrypted (it has no cipher)`);
  if (o.item.check_sum) {
    const md5 = createHash('md5').update(o.data).digest('hex');
    if (md5 !== o.item.check_sum.toLowerCase())
      throw new E2eError(`item ${o.item.item_id}: the bytes have MD5 ${md5}, its check_sum is ${o.item.check_sum}`);
  }
  return openBuffer(o.privateKey, e2eInfo.scan(o.scanUuid, o.item.item_id), o.item.cipher, o.data);
}

/**
 * Decrypts a page received by direct transfer from an encrypted scan (its manifest entry has
 * `cipher`; `data`, checked by the receiver against `sha256`, is the encrypted file). The key is
 * bound to the scan and the page's `page_number` (docs/encryption.md, "Direct transfer").
 */
export async function decryptDirectPage(o: {
  privateKey: string;
  scanUuid: string;
  page: { page_number: number; cipher?: string; data: Uint8Array };
}): Promise<Buffer> {
  if (!o.page.cipher) throw new E2eError(`page ${o.page.page_number} is not encrypted (it has no cipher)`);
  return openBuffer(o.privateKey, e2eInfo.page(o.scanUuid, o.page.page_number), o.page.cipher, o.page.data);
}

/** The same for a downloaded file on disk, streamed; `out` appears only when the tag verified. */
export async function decryptScanItemFile(o: {
  privateKey: string;
  scanUuid: string;
  item: EncryptedItem;
  path: string;
  out: string;
}): Promise<{ size: number }> {
  if (!o.item.cipher) throw new E2eError(`item ${o.item.item_id} is not encrypted (it has no cipher)`);
  return openFile(o.path, o.out, o.privateKey, e2eInfo.scan(o.scanUuid, o.item.item_id), o.item.cipher);
}
