// Secrets the server must be able to read back (callback signing secrets: it signs with them)
// are stored encrypted, not in plain text: AES-256-GCM under a key from BOXHUB_SECRET_KEY or a
// key file readable by the server's user only (docs/configuration.md "Secrets at rest").
// API keys and device secrets are not here: the server only recognises those, so it keeps
// their sha256 (secrets.ts).
//
// Stored form: `enc:v1:<key id>:<iv>:<ciphertext+tag>` (base64url). The key id (the first 8 hex
// digits of a hash of the key) tells "encrypted under another key" apart from "corrupted", so
// nodes started with different keys fail with a message that says so.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import type { SecretKeySource } from './config.ts';
import { errnoCode, messageOf } from '@boxhub/protocol';

const PREFIX = 'enc:v1:';

export class SecretKeyError extends Error {}

export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new SecretKeyError('the secret key must be 32 bytes');
    this.key = key;
    this.keyId = createHash('sha256').update('boxhub secret key id\0').update(key).digest('hex').slice(0, 8);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** The key id a sealed value was made with, or undefined for plain text. */
  static keyIdOf(value: string): string | undefined {
    return SecretBox.isSealed(value) ? value.slice(PREFIX.length).split(':')[0] : undefined;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    return `${PREFIX}${this.keyId}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  /** The plain secret; a value stored before encryption existed is returned as it is. */
  open(value: string): string {
    if (!SecretBox.isSealed(value)) return value;
    const [keyId, iv, body] = value.slice(PREFIX.length).split(':');
    if (keyId !== this.keyId) {
      throw new SecretKeyError(
        `a stored secret was encrypted under another key (key id ${keyId}, this server's is ${this.keyId}): every node needs the same BOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE`,
      );
    }
    const raw = Buffer.from(body ?? '', 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv ?? '', 'base64url'));
    d.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([d.update(raw.subarray(0, raw.length - 16)), d.final()]).toString('utf8');
  }
}

/**
 * The key from the environment, or from its file. The default file (<data dir>/secret.key) is
 * made on first start, owner-only; an existing file that others could read, or that belongs to
 * another user, is refused: the key is worth as much as every secret it protects.
 */
export function loadSecretBox(source: SecretKeySource): SecretBox {
  if (source.kind === 'env') return new SecretBox(source.key);
  let fd: number;
  try {
    fd = openSync(source.path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT')
      throw new SecretKeyError(`cannot open the secret key file ${source.path}: ${messageOf(e)}`);
    if (source.explicit)
      throw new SecretKeyError(
        `BOXHUB_SECRET_KEY_FILE ${source.path} does not exist (make one: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)`,
      );
    return createKeyFile(source.path);
  }
  try {
    const st = fstatSync(fd);
    if ((st.mode & 0o077) !== 0)
      throw new SecretKeyError(
        `the secret key file ${source.path} may be read by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`,
      );
    if (process.getuid && st.uid !== process.getuid())
      throw new SecretKeyError(`the secret key file ${source.path} belongs to another user (uid ${st.uid})`);
    const text = readFileSync(fd, 'utf8').trim();
    const key = Buffer.from(text, 'base64');
    if (key.length !== 32) throw new SecretKeyError(`the secret key file ${source.path} must hold 32 bytes in base64`);
    return new SecretBox(key);
  } finally {
    closeSync(fd);
  }
}

function createKeyFile(path: string): SecretBox {
  const key = randomBytes(32);
  // Written whole under a temporary name, then linked into place: link() fails when the name
  // exists, so two processes starting at once agree on one key and never read a half-written one.
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    writeSync(fd, `${key.toString('base64')}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return loadSecretBox({ kind: 'file', path, explicit: true });
    throw new SecretKeyError(`cannot create the secret key file ${path}: ${messageOf(e)}`);
  } finally {
    unlinkSync(tmp);
  }
  return new SecretBox(key);
}
