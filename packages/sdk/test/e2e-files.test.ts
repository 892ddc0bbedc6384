// The SDK's encrypted files on disk (e2e-files.ts; docs/encryption.md, "Decrypting"): a file
// sealed and opened streamed, and the plaintext file written only when its GCM tag verified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E2E, e2eInfo, generateKeyPair, openBuffer } from '@boxhub/protocol/e2e.ts';
import { openFile, sealFile } from '../src/e2e-files.ts';

test('files, streamed: the plaintext file appears only when its tag verified', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-'));
  try {
    const box = await generateKeyPair();
    const info = e2eInfo.print('device-1');
    const plain = Buffer.alloc(3 * 1024 * 1024 + 5);
    for (let i = 0; i < plain.length; i++) plain[i] = (i * 31) & 0xff;
    writeFileSync(join(dir, 'in'), plain);
    const sealed = await sealFile(join(dir, 'in'), join(dir, 'enc'), box.publicKey, info);
    const enc = readFileSync(join(dir, 'enc'));
    assert.equal(sealed.size, enc.length);
    assert.equal(sealed.size, plain.length + E2E.fileOverhead);
    assert.deepEqual(await openBuffer(box.privateKey, info, sealed.cipher, enc), plain);
    assert.deepEqual(await openFile(join(dir, 'enc'), join(dir, 'out'), box.privateKey, info, sealed.cipher), {
      size: plain.length,
    });
    assert.deepEqual(readFileSync(join(dir, 'out')), plain);
    rmSync(join(dir, 'out'));
    enc[enc.length - 100]! ^= 0x80;
    writeFileSync(join(dir, 'bad'), enc);
    await assert.rejects(openFile(join(dir, 'bad'), join(dir, 'out'), box.privateKey, info, sealed.cipher), /GCM tag/);
    assert.ok(
      !existsSync(join(dir, 'out')) && !existsSync(join(dir, 'out.part')),
      'nothing is left of a file that failed',
    );
    writeFileSync(join(dir, 'short'), enc.subarray(0, 20));
    await assert.rejects(
      openFile(join(dir, 'short'), join(dir, 'out'), box.privateKey, info, sealed.cipher),
      /shorter than/,
    );
    // An empty file encrypts to nonce + tag and opens to nothing.
    writeFileSync(join(dir, 'empty'), '');
    const e = await sealFile(join(dir, 'empty'), join(dir, 'empty.enc'), box.publicKey, info);
    assert.equal(e.size, E2E.fileOverhead);
    assert.deepEqual(await openFile(join(dir, 'empty.enc'), join(dir, 'empty.out'), box.privateKey, info, e.cipher), {
      size: 0,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
