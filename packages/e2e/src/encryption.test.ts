// End-to-end encryption (docs/encryption.md) on real parts: a server, its broker and
// blob store, simulated boxes that scan and print, and Python's `cryptography` on the other
// side. Proves that what the server stores and serves is ciphertext, that Node and Python
// decrypt it, that a rotation does not strand a running task, and that a tampered file or a
// wrong cipher prints nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PDFDocument } from 'pdf-lib';
import { decryptScanItem, encryptForBox, generateKeyPair, keyId, type E2eKeyPair, type ScanItem } from '@boxhub/sdk';
import { E2E } from '@boxhub/protocol/e2e.ts';
import mqtt from 'mqtt';
import { topics } from '@boxhub/protocol';
import { parseState } from '@boxhub/server/modules/devices/view.ts';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { tempDirUntilExit } from '@boxhub/agent/store/temp-state-dir.ts';
import { refusal, rigSdk, startRig, type Rig, type RigBox } from './fixtures.ts';

// The python3 on PATH (this machine kind's has cryptography 48, with HPKE); when it lacks the
// package, Debian's, with the python3-cryptography .ci/run installs (boxhub_e2e.py builds HPKE
// from its primitives where cryptography has no hpke module).
const hasCryptography = (py: string): boolean => {
  try {
    execFileSync(py, ['-c', 'import cryptography'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const PYTHON = hasCryptography('python3') || !existsSync('/usr/bin/python3') ? 'python3' : '/usr/bin/python3';
const python = (args: string[]) =>
  execFileSync(PYTHON, [new URL('../../../docs/examples/boxhub_e2e.py', import.meta.url).pathname, ...args], {
    encoding: 'utf8',
  }).trim();
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let rig: Rig;
let rx: Receiver;
let work: string;
let appKey: E2eKeyPair;
before(async () => {
  rig = await startRig({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  work = tempDirUntilExit('boxhub-e2e-enc-');
});
after(async () => {
  await rig.close();
  await rx.close();
});

const register = (publicKey: string) => rig.sdk.encryption.registerKey({ public_key: publicKey });
const scanInfo = (box: RigBox, scan_uuid: string) => rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid });
const scanDone = (box: RigBox, scan_uuid: string) =>
  rig.sdk.scan.waitForFinish({ client_uuid: box.uuid, scan_uuid }, { intervalMs: 50, timeoutMs: 30_000 });
const items = async (box: RigBox, scan_uuid: string) => {
  const all: ScanItem[] = [];
  for await (const it of rig.sdk.scan.items({ client_uuid: box.uuid, scan_uuid })) all.push(it);
  return all;
};
const printDone = (box: RigBox, print_uuid: string) =>
  rig.sdk.print.waitForFinish({ client_uuid: box.uuid, print_uuid }, { intervalMs: 50, timeoutMs: 30_000 });
/** An item's bytes as the server serves them (ciphertext), fetched from its temp_download_url. */
const download = async (it: ScanItem) => Buffer.from(await (await fetch(it.temp_download_url!)).arrayBuffer());
/** Opens an item with the application's private key (decryptScanItem checks its MD5 first). */
const decrypt = (privateKey: string, scanUuid: string, item: ScanItem, data: Buffer) =>
  decryptScanItem({ privateKey, scanUuid, item, data });
const stored = async (key: string) => buffer(await rig.t.server.blobs.get(key));

async function pdf(pages: number): Promise<Buffer> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++)
    d.addPage([595.28, 841.89]).drawText(`worksheet page ${i + 1}`, { x: 50, y: 700, size: 30 });
  return Buffer.from(await d.save());
}

describe('keys', () => {
  test('before the application registers a key, an encrypted scan is refused with 20601 and nothing starts', async () => {
    const box = await rig.box();
    await rig.load(box, 1);
    const r = await refusal(rig.sdk.scan.create({ client_uuid: box.uuid, options: { encrypt: true } }));
    assert.equal(r.code, 20601);
    assert.match(r.msg, /e2e_key\/register/);
    assert.deepEqual(await rig.sdk.scan.current({ client_uuid: box.uuid }), { exist: false });
    await box.agent.stop();
  });

  test('an application registers and rotates its public key; the key ids are SHA-256 prefixes', async () => {
    const first = await generateKeyPair();
    const r1 = await register(first.publicKey); // resolves only on code 0
    assert.equal(r1.kid, first.kid);
    assert.equal(r1.kid, createHash('sha256').update(Buffer.from(first.publicKey, 'hex')).digest('hex').slice(0, 16));
    assert.equal(r1.current, true);
    // The same key again changes nothing; base64url is the same key.
    const again = await register(Buffer.from(first.publicKey, 'hex').toString('base64url'));
    assert.equal(again.kid, first.kid);
    appKey = await generateKeyPair();
    assert.equal((await register(appKey.publicKey)).kid, appKey.kid);
    const list = await rig.sdk.encryption.listKeys();
    assert.deepEqual(
      list.keys.map((k) => [k.kid, k.current, typeof k.retired_at]),
      [
        [appKey.kid, true, 'undefined'],
        [first.kid, false, 'number'],
      ],
    );
    for (const bad of ['00'.repeat(32), 'xyz', 'ab'.repeat(31)]) {
      const r = await refusal(register(bad));
      assert.equal(r.code, 10001, `${bad}: ${r.msg}`);
    }
  });

  test('registrations racing each other leave exactly one current key', async () => {
    const other = await rig.t.createApp('racing keys');
    const keys = await Promise.all(Array.from({ length: 8 }, () => generateKeyPair()));
    const sdk = rigSdk(rig.t.url, other.api_key);
    // Every registration resolves (code 0); one that was refused rejects with its code and msg.
    const answers = await Promise.all(keys.map((k) => sdk.encryption.registerKey({ public_key: k.publicKey })));
    assert.deepEqual(
      answers.map((r) => r.kid),
      keys.map((k) => k.kid),
    );
    const list = await sdk.encryption.listKeys();
    assert.equal(list.keys.length, 8);
    assert.equal(list.keys.filter((k) => k.current).length, 1);
  });

  test('a box makes its key pair at first start (owner-only file), keeps it across restarts, and client/info shows it', async () => {
    const box = await rig.box();
    const file = join(box.stateDir, 'e2e-key.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const k = JSON.parse(readFileSync(file, 'utf8')) as { public_key: string; private_key: string };
    const info = await eventually(async () => {
      const { client } = await rig.sdk.devices.info({ uuid: box.uuid });
      return client?.e2e_public_key ? client : undefined;
    }, 'the box key in client/info');
    assert.equal(info.e2e_public_key, k.public_key);
    assert.equal(info.e2e_kid, keyId(k.public_key));
    assert.ok(!JSON.stringify(info).includes(k.private_key), 'the private key never leaves the box');
    await box.agent.stop();
    const again = await rig.box({ stateDir: box.stateDir, device: { uuid: box.uuid, secret: box.secret } });
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).public_key, k.public_key, 'the same key after a restart');
    await again.agent.stop();
  });
});

describe('an agent without encryption', () => {
  test('is not asked to encrypt: scan and print create answer 30311 and nothing starts', async () => {
    // A real box's state as an older agent reports it: the same printer and scanner, no key.
    const real = await rig.box();
    const state = await eventually(async () => {
      const st = parseState((await rig.t.server.repos.devices.findByUuid(real.uuid))!);
      return st?.e2e_public_key && st.printer.capability ? st : undefined;
    }, 'a full state');
    await real.agent.stop();
    const { e2e_public_key: _dropped, ...old } = state;
    const d = await rig.t.registerDevice();
    await rig.sdk.devices.bind({ uuid: d.uuid, name: 'old agent' });
    const raw = await mqtt.connectAsync(rig.t.mqttUrl, {
      clientId: d.uuid,
      username: d.uuid,
      password: d.secret,
      protocolVersion: 4,
      clean: true,
    });
    try {
      await raw.publishAsync(topics.state(d.uuid), JSON.stringify({ ...old, jobs: [], at: Date.now() }), {
        qos: 1,
        retain: true,
      });
      await raw.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session: 's1' }), {
        qos: 1,
        retain: true,
      });
      await rig.online(d.uuid);
      await eventually(() => rig.sdk.print.capability({ client_uuid: d.uuid }), 'its printer known'); // eventually retries while it rejects
      const scan = await refusal(rig.sdk.scan.create({ client_uuid: d.uuid, options: { encrypt: true } }));
      assert.equal(scan.code, 30311, scan.msg);
      assert.match(scan.msg, /without end-to-end encryption/);
      const sealed = await encryptForBox({ file: await pdf(1), boxPublicKey: appKey.publicKey, clientUuid: d.uuid });
      const print = await refusal(
        rig.sdk.print.create({
          client_uuid: d.uuid,
          file_type: 'pdf',
          file_content: sealed.file.toString('base64'),
          options: { encrypt: true, cipher: sealed.cipher },
        }),
      );
      assert.equal(print.code, 30311, print.msg);
      assert.deepEqual(await rig.sdk.scan.current({ client_uuid: d.uuid }), { exist: false });
    } finally {
      await raw.endAsync();
    }
  });
});

describe('encrypted scans', () => {
  test('every item is encrypted on the box: stored and downloaded bytes are ciphertext; Node and Python decrypt them', async () => {
    const box = await rig.box();
    await rig.load(box, [
      { front: 'text', back: 'text' },
      { front: 'text', back: 'blank' },
    ]);
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { encrypt: true, resolution: 150, callback_url: `${rx.url}/enc` },
      })
    ).uuid!;
    const done = await scanDone(box, uuid);
    assert.equal(done.error_code, 0);
    const [item] = await items(box, uuid);
    assert.ok(item);
    assert.match(item.cipher!, new RegExp(`^[0-9a-f]{${E2E.cipherHexLength}}$`));
    assert.equal(item.cipher_kid, appKey.kid);
    // scan.download checks the MD5 and size as it streams; the checks below say them again.
    const saved = await rig.sdk.scan.download(item, join(work, 'item.enc'));
    const downloaded = readFileSync(saved.path);
    assert.equal(saved.md5, item.check_sum);
    const atRest = await stored(`scan/${uuid}/${item.item_id}.pdf`);
    assert.deepEqual(downloaded, atRest, 'the download serves the stored bytes');
    assert.equal(md5(downloaded), item.check_sum, 'check_sum is the MD5 of the encrypted file');
    assert.equal(Math.ceil(downloaded.length / 1024), item.file_size);
    assert.ok(
      !downloaded.includes(Buffer.from('%PDF')) && !downloaded.includes(Buffer.from('DCTDecode')),
      'no PDF structure in what the server holds',
    );

    const plain = await decrypt(appKey.privateKey, uuid, item, downloaded);
    assert.equal(plain.length, downloaded.length - E2E.fileOverhead);
    assert.equal((await PDFDocument.load(plain)).getPageCount(), 3);
    await assert.rejects(
      decrypt(appKey.privateKey, uuid, { ...item, item_id: item.item_id + 1 }, downloaded),
      /does not open/,
    );

    // Python's cryptography, with its own HPKE from primitives (docs/examples/boxhub_e2e.py).
    python([
      'decrypt-scan',
      '--private-key',
      appKey.privateKey,
      '--scan-uuid',
      uuid,
      '--item-id',
      String(item.item_id),
      '--cipher',
      item.cipher!,
      join(work, 'item.enc'),
      join(work, 'item.pdf'),
    ]);
    assert.deepEqual(readFileSync(join(work, 'item.pdf')), plain);
    // The scan.item_data callback carries the cipher and the key id too.
    const cb = await eventually(
      () => rx.received.find((r) => r.path.endsWith('/enc') && JSON.parse(r.body).event === 'scan.item_data'),
      'scan.item_data',
    );
    const body = JSON.parse(cb.body) as ScanItem;
    assert.equal(body.cipher, item.cipher);
    assert.equal(body.cipher_kid, appKey.kid);
    assert.equal(body.check_sum, item.check_sum);
    // Nothing of the scan stays on the box in plaintext (and the encrypted item goes once recorded).
    await eventually(
      () => !readdirSafe(join(box.stateDir, 'scans', uuid)).some((f) => f.endsWith('.pdf')),
      'item files removed from the box',
    );
  });

  test('a rotation does not change a running task: its later items stay encrypted to the key it was created with', async () => {
    const box = await rig.box();
    await rig.load(box, 1);
    const uuid = (
      await rig.sdk.scan.create({
        client_uuid: box.uuid,
        options: { encrypt: true, continuous: true, continuous_wait: 0, duplex: false },
      })
    ).uuid!;
    await eventually(async () => (await scanInfo(box, uuid)).item_size === 1, 'first item');
    const newer = await generateKeyPair();
    assert.equal((await register(newer.publicKey)).kid, newer.kid); // resolves only on code 0
    // The running scan takes the paper at once: the server need not see the feeder loaded.
    box.scanner.load(1);
    await eventually(async () => (await scanInfo(box, uuid)).item_size === 2, 'second item after the rotation');
    await rig.sdk.scan.stop({ client_uuid: box.uuid }); // resolves only on code 0
    for (const it of await items(box, uuid)) {
      assert.equal(it.cipher_kid, appKey.kid, `item ${it.item_id}`);
      assert.equal(
        (await PDFDocument.load(await decrypt(appKey.privateKey, uuid, it, await download(it)))).getPageCount(),
        1,
      );
    }
    // A task created now uses the new key.
    await rig.load(box, 1);
    const later = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { encrypt: true, duplex: false } }))
      .uuid!;
    await scanDone(box, later);
    const [it] = await items(box, later);
    assert.equal(it!.cipher_kid, newer.kid);
    assert.equal(it!.item_id, 1);
    await decrypt(newer.privateKey, later, it!, await download(it!));
    appKey = newer;
  });
  test('a box power-cycled mid-scan still delivers its finished items encrypted, with the cipher it kept', async () => {
    const box = await rig.box({ scanner: 'sim:?ppm=240' });
    await rig.load(box, 40);
    const uuid = (await rig.sdk.scan.create({ client_uuid: box.uuid, options: { encrypt: true, duplex: false } }))
      .uuid!;
    await eventually(() => box.scanner.sheets <= 36, 'a few sheets scanned');
    await box.agent.stop();
    const again = await rig.box({ stateDir: box.stateDir, device: { uuid: box.uuid, secret: box.secret } });
    const done = await scanDone(box, uuid);
    assert.equal(done.error_code, 2205);
    const got = await items(box, uuid);
    assert.ok(got.length >= 1);
    for (const it of got) {
      const plain = await decrypt(appKey.privateKey, uuid, it, await download(it));
      assert.equal((await PDFDocument.load(plain)).getPageCount(), it.pages);
    }
    await again.agent.stop();
  });
});

describe('encrypted prints', () => {
  let box: RigBox;
  let boxKey: string;
  let out: string;
  before(async () => {
    out = tempDirUntilExit('boxhub-printed-');
    box = await rig.box({ printer: `sim:?side_ms=1&out=${encodeURIComponent(out)}` });
    boxKey = await eventually(
      async () => (await rig.sdk.devices.info({ uuid: box.uuid })).client?.e2e_public_key,
      'box key',
    );
  });
  type CreateOptions = NonNullable<Parameters<Rig['sdk']['print']['create']>[0]['options']>;
  /** The created task's uuid; a refusal rejects with its BoxhubError. */
  const create = async (file: Buffer, cipher: string, options: CreateOptions = {}) =>
    (
      await rig.sdk.print.create({
        client_uuid: box.uuid,
        file_type: 'pdf',
        file_content: file.toString('base64'),
        file_check_sum: md5(file),
        options: { encrypt: true, cipher, ...options },
      })
    ).uuid!;
  const seal = (file: Uint8Array, clientUuid = box.uuid) => encryptForBox({ file, boxPublicKey: boxKey, clientUuid });

  test('the server stores the file it cannot read; the box decrypts, counts the pages and prints them', async () => {
    const doc = await pdf(3);
    const { file, cipher } = await seal(doc);
    const uuid = await create(file, cipher, { number: 2, page_ranges: '1-2', strict: true });
    assert.deepEqual(await stored(`print/${uuid}/document.pdf.enc`), file, 'stored as sent: ciphertext');
    const done = await printDone(box, uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.pages, 4, 'counted on the box after decryption: 2 selected pages × 2 copies');
    assert.equal(done.printed_pages, 4);
    const job = box.printer.jobs.find((j) => j.task === uuid)!;
    assert.equal(job.state, 'completed');
    assert.equal(
      (await PDFDocument.load(readFileSync(job.rendered!))).getPageCount(),
      2,
      'the printer got the decrypted, selected pages',
    );
    assert.equal(job.copies, 2);
  });

  test('a file Python encrypted prints', async () => {
    writeFileSync(join(work, 'print.pdf'), await pdf(2));
    const cipher = python([
      'encrypt-print',
      '--public-key',
      boxKey,
      '--client-uuid',
      box.uuid,
      join(work, 'print.pdf'),
      join(work, 'print.enc'),
    ]);
    const uuid = await create(readFileSync(join(work, 'print.enc')), cipher);
    const done = await printDone(box, uuid);
    assert.equal(done.error_code, 0);
    assert.equal(done.pages, 2);
    assert.equal(box.printer.jobs.find((j) => j.task === uuid)?.state, 'completed');
  });

  test('a tampered file, a cipher for another device or a damaged cipher fail with 4003 and print nothing', async () => {
    const doc = await pdf(1);
    const good = await seal(doc);
    const tampered = Buffer.from(good.file);
    tampered[tampered.length >> 1]! ^= 0x01;
    const otherDevice = await seal(doc, 'another-device');
    const damaged = good.cipher.slice(0, 70) + (good.cipher[70] === 'a' ? 'b' : 'a') + good.cipher.slice(71);
    for (const [what, file, cipher] of [
      ['tampered file', tampered, good.cipher],
      ['cipher for another device', otherDevice.file, otherDevice.cipher],
      ['damaged cipher', good.file, damaged],
    ] as const) {
      // The server cannot tell: the create resolves (code 0); a refusal would reject with its code and msg.
      const uuid = await create(file, cipher);
      const done = await printDone(box, uuid);
      assert.equal(done.error_code, 4003, what);
      assert.equal(done.started, false, what);
      assert.equal(
        box.printer.jobs.some((j) => j.task === uuid),
        false,
        `${what}: nothing reached the printer`,
      );
    }
  });

  test("ciphertext altered in the server's storage is caught by the box's MD5 check (4002): nothing printed", async () => {
    // A slow job first, so the encrypted task waits in the box's queue while its stored file is altered.
    box.printer.pauseAfter(1);
    const slow = (
      await rig.sdk.print.create({
        client_uuid: box.uuid,
        file_type: 'pdf',
        file_content: (await pdf(20)).toString('base64'),
      })
    ).uuid!;
    const { file, cipher } = await seal(await pdf(1));
    const uuid = await create(file, cipher);
    const altered = Buffer.from(file);
    altered[40]! ^= 0x20;
    await rig.t.server.blobs.put(`print/${uuid}/document.pdf.enc`, altered, {
      contentType: 'application/octet-stream',
    });
    box.printer.resume();
    assert.equal((await printDone(box, slow)).error_code, 0);
    const done = await printDone(box, uuid);
    assert.equal(done.error_code, 4002);
    assert.equal(
      box.printer.jobs.some((j) => j.task === uuid),
      false,
    );
  });

  test("direct mode: the box fetches the encrypted file from the application's address and decrypts it", async () => {
    const { file, cipher, checkSum } = await seal(await pdf(2));
    const srv = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file);
    });
    await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
    try {
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/sheet.enc`;
      const uuid = (
        await rig.sdk.print.create({
          client_uuid: box.uuid,
          file_type: 'pdf',
          file_url: url,
          file_check_sum: checkSum,
          options: { direct: true, encrypt: true, cipher },
        })
      ).uuid!;
      const done = await printDone(box, uuid);
      assert.equal(done.error_code, 0);
      assert.equal(done.pages, 2);
    } finally {
      srv.close();
    }
  });

  test('the server checks what it can: the cipher format, the MD5, the minimum size; a file that is no PDF fails on the box (4004)', async () => {
    const doc = await pdf(1);
    const { file, cipher } = await seal(doc);
    const short = await refusal(create(file, cipher.slice(0, 158)));
    assert.equal(short.code, 10001);
    assert.match(short.msg, /160 hex digits/);
    // The SDK's types allow encrypt without a cipher (cipher is optional there): the server refuses it.
    const noCipher = await refusal(
      rig.sdk.print.create({
        client_uuid: box.uuid,
        file_type: 'pdf',
        file_content: file.toString('base64'),
        options: { encrypt: true },
      }),
    );
    assert.equal(noCipher.code, 10001);
    const wrongSum = await refusal(
      rig.sdk.print.create({
        client_uuid: box.uuid,
        file_type: 'pdf',
        file_content: file.toString('base64'),
        file_check_sum: md5(doc),
        options: { encrypt: true, cipher },
      }),
    );
    assert.equal(wrongSum.code, 30309, 'file_check_sum is the MD5 of the encrypted file');
    const tiny = await refusal(create(Buffer.alloc(10), cipher));
    assert.equal(tiny.code, 30304);
    const notPdf = await seal(Buffer.from('this is not a PDF'));
    // Page checks are the box's for an encrypted file: the create resolves (code 0).
    const uuid = await create(notPdf.file, notPdf.cipher);
    assert.equal((await printDone(box, uuid)).error_code, 4004);
  });
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
