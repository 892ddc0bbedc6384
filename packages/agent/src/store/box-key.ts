// The box's X25519 key pair for end-to-end encrypted print files (docs/encryption.md, "Keys"):
// made at the first start, kept in the state directory with owner-only permissions, written
// atomically; the private key never leaves this file. The public key goes into the box state.
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, keyId, publicKeyOf, type E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import { ensureDir, writeFileAtomic } from './atomic-file.ts';
import { errnoCode } from '@boxhub/protocol/caught.ts';

export const BOX_KEY_FILE = 'e2e-key.json';

export async function loadBoxKey(stateDir: string): Promise<E2eKeyPair> {
  const path = join(stateDir, BOX_KEY_FILE);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
  if (text !== undefined) {
    const k = JSON.parse(text) as { private_key?: string };
    if (typeof k.private_key !== 'string')
      throw new Error(
        `${path} holds no private_key: remove it to make a new key pair (print files encrypted to the old key then fail)`,
      );
    const publicKey = await publicKeyOf(k.private_key);
    await chmod(path, 0o600);
    return { privateKey: k.private_key, publicKey, kid: keyId(publicKey) };
  }
  ensureDir(stateDir);
  const kp = await generateKeyPair();
  await writeFileAtomic(
    path,
    `${JSON.stringify({ scheme: 'boxhub-e2e-v1', kid: kp.kid, public_key: kp.publicKey, private_key: kp.privateKey })}\n`,
  );
  return kp;
}
