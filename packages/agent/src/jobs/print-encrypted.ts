// An end-to-end encrypted print file on the box (docs/encryption.md, "Printing"). The content
// key is opened from the task's cipher with the box's key for this device; the file is then
// decrypted as it downloads (transfer/get-file.ts), into a file that takes its real name only
// once the MD5 of the encrypted bytes and the GCM tag have both verified, so nothing
// unauthenticated can reach the printer. `pages` is counted from the document as prepared
// (the server could not read it).
import { e2eInfo, E2eError, unwrapContentKey, type E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import type { PrintJobOptions } from '@boxhub/protocol';
import { selectedPages } from '../media/document-plan.ts';

/** The content key of a print file, or why it does not open (the task fails with 4003). */
export async function printFileKey(
  cipher: string,
  deviceUuid: string,
  key: E2eKeyPair | undefined,
): Promise<{ ok: true; key: Buffer } | { ok: false; message: string }> {
  if (!key) return { ok: false, message: 'the box has no key pair to decrypt with; nothing was printed' };
  try {
    return { ok: true, key: await unwrapContentKey(key.privateKey, e2eInfo.print(deviceUuid), cipher) };
  } catch (e) {
    if (e instanceof E2eError) return { ok: false, message: `${e.message}; nothing was printed (box key ${key.kid})` };
    throw e;
  }
}

/** The print task's `pages` (docs/api.md, "Print task") of a file the server could not read:
 *  selected pages × copies. */
export function printPages(sourcePages: number, o: PrintJobOptions): number {
  return selectedPages(sourcePages, o.page_ranges).length * o.copies;
}
