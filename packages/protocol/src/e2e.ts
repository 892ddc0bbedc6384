// End-to-end encryption of scans and print files, scheme `boxhub-e2e-v1` (docs/encryption.md).
// The one implementation of the scheme: the box, the server (key ids), the SDK and the tests use
// it. Bytes in, bytes out (openStream is a transform on a stream its caller opens): no file,
// process or network here; the SDK's e2e-files.ts reads and writes files. Nothing here is
// home-made cryptography:
//
//   content key K   32 random bytes, fresh per file
//   cipher          lowercase hex( enc(32) ‖ HPKE.Seal(pkR, info, aad = "", K)(48) ) = 160 hex
//                   HPKE RFC 9180 base mode, DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 /
//                   AES-256-GCM (0x0020 / 0x0001 / 0x0002), via @hpke/core
//   file            nonce(12 random) ‖ AES-256-GCM(K, nonce, aad = "").ciphertext ‖ tag(16),
//                   node:crypto, streamed
//   info            scan:  "boxhub/e2e/v1 scan {scan_uuid} {item_id}"
//                   print: "boxhub/e2e/v1 print {client_uuid}"
//   kid             first 8 bytes of SHA-256(raw 32-byte public key), lowercase hex
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  webcrypto,
  type CipherGCM,
  type DecipherGCM,
} from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { Aes256Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';

export const E2E_SCHEME = 'boxhub-e2e-v1';
export const E2E = {
  keyBytes: 32,
  /** HPKE encapsulated key (the ephemeral X25519 public key). */
  encBytes: 32,
  /** The content key sealed by HPKE: 32 bytes + a 16-byte tag. */
  wrappedKeyBytes: 48,
  cipherHexLength: 160,
  nonceBytes: 12,
  tagBytes: 16,
  /** Bytes an encrypted file has beyond its plaintext: nonce + tag. */
  fileOverhead: 28,
} as const;

/** HPKE `info` strings: they bind a content key to the one use it was made for. */
export const e2eInfo = {
  scan: (scanUuid: string, itemId: number): string => `boxhub/e2e/v1 scan ${scanUuid} ${itemId}`,
  print: (clientUuid: string): string => `boxhub/e2e/v1 print ${clientUuid}`,
  /** A page sent by direct transfer (docs/direct-transfer.md), by its page_number. */
  page: (scanUuid: string, pageNumber: number): string => `boxhub/e2e/v1 scan ${scanUuid} p${pageNumber}`,
};

/** A cipher, key or encrypted file that does not open: wrong key, wrong info, or tampered bytes. */
export class E2eError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'E2eError';
  }
}

let suite: CipherSuite | undefined;
const hpke = (): CipherSuite =>
  (suite ??= new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() }));

type KeyInput = string | Uint8Array;

/** A raw 32-byte X25519 key from bytes, 64 hex digits, or 43 base64url characters. */
export function rawKey(k: KeyInput, what = 'key'): Buffer {
  if (typeof k !== 'string') {
    if (k.length !== 32) throw new TypeError(`${what} must be 32 bytes, not ${k.length}`);
    return Buffer.from(k);
  }
  if (/^[0-9a-fA-F]{64}$/.test(k)) return Buffer.from(k, 'hex');
  if (/^[A-Za-z0-9_-]{43}=?$/.test(k)) {
    const b = Buffer.from(k, 'base64url');
    if (b.length === 32 && b.toString('base64url') === k.replace(/=$/, '')) return b;
  }
  throw new TypeError(`${what} must be a raw X25519 key: 64 hex digits or 43 base64url characters`);
}

/** The key id of a public key: the first 8 bytes of its SHA-256, hex (16 digits). */
export function keyId(publicKey: KeyInput): string {
  return createHash('sha256').update(rawKey(publicKey, 'public key')).digest('hex').slice(0, 16);
}

export interface E2eKeyPair {
  /** Raw X25519 public key, hex. */
  publicKey: string;
  /** Raw X25519 private key, hex: keep it secret (owner-only file, secret store). */
  privateKey: string;
  kid: string;
}

/** A new X25519 key pair (WebCrypto). */
export async function generateKeyPair(): Promise<E2eKeyPair> {
  const kp = await hpke().kem.generateKeyPair();
  const publicKey = Buffer.from(await hpke().kem.serializePublicKey(kp.publicKey)).toString('hex');
  const privateKey = Buffer.from(await hpke().kem.serializePrivateKey(kp.privateKey)).toString('hex');
  return { publicKey, privateKey, kid: keyId(publicKey) };
}

/** The public key of a private key (hex). */
export async function publicKeyOf(privateKey: KeyInput): Promise<string> {
  const sk = await hpke().kem.deserializePrivateKey(rawKey(privateKey, 'private key'));
  // WebCrypto keeps X25519 private keys as JWK with `x` = the public key.
  const jwk = await webcrypto.subtle.exportKey('jwk', sk as webcrypto.CryptoKey);
  if (!jwk.x) throw new Error('the private key has no public part');
  return Buffer.from(jwk.x, 'base64url').toString('hex');
}

/**
 * Keys as imported CryptoKeys: a box seals every scan item to the same application key and opens
 * every print cipher with its own key, an application opens every item with its key, and an
 * import is a WebCrypto call each time (~0.4 of the 1.4 ms of CPU a seal took, bench/encryption).
 * CryptoKeys are immutable; each map is bounded. Entries are named by the key's SHA-256, so a
 * private key is not held once more as a string.
 */
function keyCache(
  size: number,
  load: (raw: Buffer) => Promise<webcrypto.CryptoKey>,
): (raw: Buffer) => Promise<webcrypto.CryptoKey> {
  const keys = new Map<string, Promise<webcrypto.CryptoKey>>();
  return (raw) => {
    const id = createHash('sha256').update(raw).digest('base64');
    let k = keys.get(id);
    if (!k) {
      k = load(raw);
      // A key that fails to import is not kept (the next call reports it again).
      k.catch(() => keys.delete(id));
      const oldest = keys.keys().next();
      if (keys.size >= size && !oldest.done) keys.delete(oldest.value);
      keys.set(id, k);
    }
    return k;
  };
}
const recipientKey = keyCache(64, (raw) => hpke().kem.deserializePublicKey(raw) as Promise<webcrypto.CryptoKey>);
const importedPrivateKey = keyCache(16, (raw) => hpke().kem.deserializePrivateKey(raw) as Promise<webcrypto.CryptoKey>);

/**
 * Seals a content key to a public key: the `cipher` (160 hex). `ikmE` fixes the ephemeral key
 * (RFC 9180 DeriveKeyPair input) for test vectors only; without it the key is random.
 */
export async function wrapContentKey(
  recipientPublicKey: KeyInput,
  info: string,
  contentKey: Uint8Array,
  o: { ikmE?: Uint8Array } = {},
): Promise<string> {
  if (contentKey.length !== E2E.keyBytes) throw new TypeError(`the content key must be ${E2E.keyBytes} bytes`);
  const pk = await recipientKey(rawKey(recipientPublicKey, 'public key'));
  const r = await hpke().seal(
    { recipientPublicKey: pk, info: Buffer.from(info, 'utf8'), ...(o.ikmE ? { ekm: o.ikmE } : {}) },
    contentKey,
  );
  return Buffer.concat([Buffer.from(r.enc), Buffer.from(r.ct)]).toString('hex');
}

/** Opens a `cipher` with the recipient's private key; E2eError when it does not open. */
export async function unwrapContentKey(privateKey: KeyInput, info: string, cipher: string): Promise<Buffer> {
  if (!new RegExp(`^[0-9a-f]{${E2E.cipherHexLength}}$`).test(cipher)) {
    throw new E2eError(
      `cipher must be ${E2E.cipherHexLength} lowercase hex digits (${E2E.encBytes}-byte HPKE enc ‖ ${E2E.wrappedKeyBytes}-byte sealed key), not ${cipher.length} characters`,
    );
  }
  const bytes = Buffer.from(cipher, 'hex');
  const sk = await importedPrivateKey(rawKey(privateKey, 'private key'));
  let key: ArrayBuffer;
  try {
    key = await hpke().open(
      { recipientKey: sk, enc: bytes.subarray(0, E2E.encBytes), info: Buffer.from(info, 'utf8') },
      bytes.subarray(E2E.encBytes),
    );
  } catch {
    throw new E2eError(
      'the cipher does not open with this key for this use (wrong key, another task, item or device, or a damaged cipher)',
    );
  }
  if (key.byteLength !== E2E.keyBytes)
    throw new E2eError(`the cipher holds ${key.byteLength} bytes, not a ${E2E.keyBytes}-byte content key`);
  return Buffer.from(key);
}

/** A fresh content key. */
export const newContentKey = (): Buffer => randomBytes(E2E.keyBytes);

/**
 * Encrypts one file as it is written: `header` (the nonce) first, then `update()` of each
 * plaintext chunk in order, then `final()` (the tag). Bytes out = bytes in + 28.
 */
export class FileSealer {
  readonly header: Buffer;
  private readonly c: CipherGCM;
  constructor(contentKey: Uint8Array, nonce: Uint8Array = randomBytes(E2E.nonceBytes)) {
    if (nonce.length !== E2E.nonceBytes) throw new TypeError(`the nonce must be ${E2E.nonceBytes} bytes`);
    this.header = Buffer.from(nonce);
    this.c = createCipheriv('aes-256-gcm', contentKey, this.header, { authTagLength: E2E.tagBytes });
  }
  update(chunk: Uint8Array): Buffer {
    return this.c.update(chunk);
  }
  final(): Buffer {
    return Buffer.concat([this.c.final(), this.c.getAuthTag()]);
  }
}

/**
 * A stream that decrypts an encrypted file: nonce from its first 12 bytes, the last 16 held
 * back as the tag. It fails (E2eError) at its end when the tag does not verify: what it let
 * through is then not to be used, so write it to a temporary file (the SDK's openFile, packages/sdk/src/e2e-files.ts, does).
 */
export function openStream(contentKey: Uint8Array): Transform {
  let head = Buffer.alloc(0);
  let d: DecipherGCM | undefined;
  let held = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      let c = chunk;
      if (!d) {
        head = Buffer.concat([head, c]);
        if (head.length < E2E.nonceBytes) {
          done();
          return;
        }
        d = createDecipheriv('aes-256-gcm', contentKey, head.subarray(0, E2E.nonceBytes), {
          authTagLength: E2E.tagBytes,
        });
        c = head.subarray(E2E.nonceBytes);
      }
      if (c.length < E2E.tagBytes) {
        // A short chunk: what was held and it together; the last 16 bytes stay held.
        const all = Buffer.concat([held, c]);
        const cut = Math.max(0, all.length - E2E.tagBytes);
        held = Buffer.from(all.subarray(cut));
        done(null, cut > 0 ? d.update(all.subarray(0, cut)) : undefined);
        return;
      }
      // The held bytes are ciphertext after all; this chunk's last 16 are held in their place
      // (no copy of the chunk itself). Their plaintext is pushed on its own rather than
      // concatenated with the chunk's, which copied every chunk once more (a whole print file).
      if (held.length) {
        const before = d.update(held);
        if (before.length) this.push(before);
      }
      const body = d.update(c.subarray(0, c.length - E2E.tagBytes));
      held = Buffer.from(c.subarray(c.length - E2E.tagBytes));
      done(null, body);
    },
    flush(done: TransformCallback) {
      if (!d || held.length < E2E.tagBytes) {
        done(new E2eError(`the encrypted file is shorter than its ${E2E.fileOverhead}-byte nonce and tag`));
        return;
      }
      try {
        d.setAuthTag(held);
        const last = d.final();
        done(null, last.length ? last : undefined);
      } catch {
        done(
          new E2eError(
            'the encrypted file fails its GCM tag check: it was altered, or the cipher belongs to another file',
          ),
        );
      }
    },
  });
}

/** Encrypts bytes in memory: the encrypted file and its cipher. */
export async function sealBuffer(
  recipientPublicKey: KeyInput,
  info: string,
  plaintext: Uint8Array,
): Promise<{ file: Buffer; cipher: string }> {
  const key = newContentKey();
  const s = new FileSealer(key);
  const file = Buffer.concat([s.header, s.update(plaintext), s.final()]);
  return { file, cipher: await wrapContentKey(recipientPublicKey, info, key) };
}

/** Decrypts an encrypted file held in memory; E2eError on a wrong key, info or cipher, or tampering. */
export async function openBuffer(
  privateKey: KeyInput,
  info: string,
  cipher: string,
  file: Uint8Array,
): Promise<Buffer> {
  const key = await unwrapContentKey(privateKey, info, cipher);
  if (file.length < E2E.fileOverhead)
    throw new E2eError(`the encrypted file is shorter than its ${E2E.fileOverhead}-byte nonce and tag`);
  const d = createDecipheriv('aes-256-gcm', key, file.subarray(0, E2E.nonceBytes), { authTagLength: E2E.tagBytes });
  d.setAuthTag(file.subarray(file.length - E2E.tagBytes));
  const body = d.update(file.subarray(E2E.nonceBytes, file.length - E2E.tagBytes));
  try {
    return Buffer.concat([body, d.final()]);
  } catch {
    throw new E2eError(
      'the encrypted file fails its GCM tag check: it was altered, or the cipher belongs to another file',
    );
  }
}
