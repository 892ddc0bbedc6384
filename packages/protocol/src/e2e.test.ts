// The scheme boxhub-e2e-v1 (docs/encryption.md): the RFC 9180 vector, the worked example byte
// for byte, round trips, and every way a file or cipher must fail to open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { readFileSync, existsSync } from 'node:fs';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import {
  E2E,
  E2eError,
  e2eInfo,
  FileSealer,
  generateKeyPair,
  keyId,
  newContentKey,
  openBuffer,
  openStream,
  publicKeyOf,
  rawKey,
  sealBuffer,
  unwrapContentKey,
  wrapContentKey,
} from './e2e.ts';

const vectors = JSON.parse(readFileSync(new URL('./e2e-vectors.json', import.meta.url), 'utf8')) as {
  rfc9180_a_1_1: Record<string, string>;
  example: Record<string, string>;
};
const hex = (s: string) => Buffer.from(s, 'hex');

test('@hpke/core reproduces RFC 9180 A.1.1 (X25519, HKDF-SHA256, AES-128-GCM): ekm is the DeriveKeyPair input', async () => {
  const a = vectors.rfc9180_a_1_1;
  const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  const r = await suite.kem.deriveKeyPair(hex(a.ikmR!));
  assert.equal(Buffer.from(await suite.kem.serializePrivateKey(r.privateKey)).toString('hex'), a.skRm);
  assert.equal(Buffer.from(await suite.kem.serializePublicKey(r.publicKey)).toString('hex'), a.pkRm);
  const sealed = await suite.seal(
    { recipientPublicKey: r.publicKey, info: hex(a.info!), ekm: hex(a.ikmE!) },
    hex(a.pt!),
    hex(a.aad!),
  );
  assert.equal(Buffer.from(sealed.enc).toString('hex'), a.enc);
  assert.equal(Buffer.from(sealed.ct).toString('hex'), a.ct);
});

test('the worked example of docs/encryption.md, byte for byte', async () => {
  const w = vectors.example;
  assert.equal(await publicKeyOf(w.private_key!), w.public_key);
  assert.equal(keyId(w.public_key!), w.kid);
  assert.equal(w.info, e2eInfo.scan('6f1c1a9e-2b1d-4c55-9a43-1f5f0c7a2b10', 1));
  const cipher = await wrapContentKey(w.public_key!, w.info!, hex(w.content_key!), { ikmE: hex(w.ikmE!) });
  assert.equal(cipher, w.cipher);
  assert.equal(cipher.length, E2E.cipherHexLength);
  const s = new FileSealer(hex(w.content_key!), hex(w.nonce!));
  assert.equal(Buffer.concat([s.header, s.update(hex(w.plaintext!)), s.final()]).toString('hex'), w.file);
  assert.equal((await unwrapContentKey(w.private_key!, w.info!, w.cipher!)).toString('hex'), w.content_key);
  assert.equal((await openBuffer(w.private_key!, w.info!, w.cipher!, hex(w.file!))).toString('hex'), w.plaintext);
  // The document shows the same values.
  const doc = readFileSync(new URL('../../../docs/encryption.md', import.meta.url), 'utf8').replace(/\s+/g, '');
  for (const k of [
    'private_key',
    'public_key',
    'kid',
    'ikmE',
    'content_key',
    'nonce',
    'plaintext',
    'cipher',
    'file',
  ] as const) {
    assert.ok(doc.includes(w[k]!), `docs/encryption.md shows the example's ${k}`);
  }
});

test('Python (an independent HPKE from cryptography primitives) reproduces the RFC vector and the example', () => {
  // `python3` on the PATH, and Debian's own (python3-cryptography 38, no hpke module) when it
  // is another one: the script needs nothing newer.
  const pythons = ['python3', ...(existsSync('/usr/bin/python3') ? ['/usr/bin/python3'] : [])];
  const seen = new Set<string>();
  for (const py of pythons) {
    const version = execFileSync(
      py,
      ['-c', 'import sys, cryptography; print(sys.executable, cryptography.__version__)'],
      { encoding: 'utf8' },
    ).trim();
    if (seen.has(version)) continue;
    seen.add(version);
    const out = execFileSync(
      py,
      [
        new URL('../../../docs/examples/boxhub_e2e.py', import.meta.url).pathname,
        'selftest',
        new URL('./e2e-vectors.json', import.meta.url).pathname,
      ],
      { encoding: 'utf8' },
    );
    assert.match(out, /^ok rfc9180 a\.1\.1 example/, `${version}: ${out}`);
  }
});

test('keys: generated pairs, key ids, hex and base64url forms', async () => {
  const k = await generateKeyPair();
  assert.match(k.publicKey, /^[0-9a-f]{64}$/);
  assert.match(k.kid, /^[0-9a-f]{16}$/);
  assert.equal(await publicKeyOf(k.privateKey), k.publicKey);
  assert.deepEqual(rawKey(hex(k.publicKey).toString('base64url')), hex(k.publicKey));
  assert.equal(keyId(k.publicKey.toUpperCase()), k.kid);
  assert.throws(() => rawKey('abc'), /64 hex digits or 43 base64url/);
  assert.throws(() => rawKey(Buffer.alloc(31)), /32 bytes/);
});

test('round trip in memory; a wrong key, another use, a damaged cipher or file do not open', async () => {
  const app = await generateKeyPair();
  const other = await generateKeyPair();
  const info = e2eInfo.scan('s-1', 2);
  const plain = Buffer.from('%PDF-1.4 a page of student work');
  const { file, cipher } = await sealBuffer(app.publicKey, info, plain);
  assert.equal(file.length, plain.length + E2E.fileOverhead);
  assert.ok(!file.includes(Buffer.from('student')));
  assert.deepEqual(await openBuffer(app.privateKey, info, cipher, file), plain);
  await assert.rejects(openBuffer(other.privateKey, info, cipher, file), E2eError);
  await assert.rejects(
    openBuffer(app.privateKey, e2eInfo.scan('s-1', 3), cipher, file),
    /does not open with this key for this use/,
  );
  await assert.rejects(openBuffer(app.privateKey, e2eInfo.print('s-1'), cipher, file), E2eError);
  const badCipher = cipher.slice(0, 100) + (cipher[100] === '0' ? '1' : '0') + cipher.slice(101);
  await assert.rejects(openBuffer(app.privateKey, info, badCipher, file), E2eError);
  await assert.rejects(openBuffer(app.privateKey, info, cipher.slice(2), file), /160 lowercase hex/);
  for (const at of [0, 12, file.length - 1]) {
    const t = Buffer.from(file);
    t[at]! ^= 1;
    await assert.rejects(openBuffer(app.privateKey, info, cipher, t), /GCM tag/);
  }
  // A cipher moved onto another file of the same key holder does not open it either.
  const second = await sealBuffer(app.publicKey, info, plain);
  await assert.rejects(openBuffer(app.privateKey, info, cipher, second.file), /GCM tag/);
});

test('openStream takes an encrypted file in chunks of any size', async () => {
  const key = newContentKey();
  for (const n of [0, 1, 15, 16, 17, 100, 70_000]) {
    const plain = randomBytes(n);
    const s = new FileSealer(key);
    const file = Buffer.concat([s.header, s.update(plain), s.final()]);
    for (const size of [1, 5, 16, 17, 29, 4096]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < file.length; i += size) parts.push(file.subarray(i, i + size));
      assert.deepEqual(
        await buffer(Readable.from(parts).pipe(openStream(key))),
        plain,
        `${n} bytes in chunks of ${size}`,
      );
    }
  }
});
