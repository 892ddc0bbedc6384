// The SDK's encryption helpers against a real server and a simulated box (docs/encryption.md):
// keys registered and listed, a scan item the box encrypted decrypted with decryptScanItem, a
// print file encrypted with encryptForBox printed, and tampering caught.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { createSimulatedBox } from '@boxhub/agent';
import { eventually, startTestServer } from '@boxhub/server/testing/harness.ts';
import {
  Boxhub,
  decryptScanItem,
  decryptScanItemFile,
  E2eError,
  encryptFileForBox,
  encryptForBox,
  generateKeyPair,
} from '@boxhub/sdk';

test('generateKeyPair, encryption.registerKey/listKeys, decryptScanItem on a real scan, encryptForBox on a real print', async () => {
  const server = await startTestServer();
  const app = await server.createApp();
  const reg = await server.registerDevice();
  const box = createSimulatedBox({
    url: server.mqttUrl,
    uuid: reg.uuid,
    secret: reg.secret,
    backoff: { baseMs: 50, maxMs: 500 },
    uploadBackoff: { baseMs: 50, maxMs: 500 },
  });
  const boxhub = new Boxhub({ baseUrl: server.url, apiKey: app.api_key });
  const dir = mkdtempSync(join(tmpdir(), 'sdk-e2e-'));
  try {
    const keys = await generateKeyPair();
    const registered = await boxhub.encryption.registerKey({ public_key: keys.publicKey });
    assert.equal(registered.kid, keys.kid);
    assert.deepEqual(
      (await boxhub.encryption.listKeys()).keys.map((k) => [k.kid, k.current]),
      [[keys.kid, true]],
    );

    await boxhub.devices.bind({ uuid: reg.uuid, name: 'Room 4' });
    await box.agent.start();
    const device = await eventually(async () => {
      const { client } = await boxhub.devices.info({ uuid: reg.uuid });
      return client?.online && client.e2e_public_key ? client : undefined;
    }, 'the box online with its key');

    box.scanner.load(2);
    await eventually(
      async () => (await boxhub.devices.info({ uuid: reg.uuid })).client?.scanner?.connected === true,
      'scanner',
    );
    const uuid = (
      await eventually(
        async () =>
          boxhub.scan
            .create({ client_uuid: reg.uuid, options: { encrypt: true, duplex: false } })
            .catch(() => undefined),
        'scan created',
      )
    ).uuid!;
    await boxhub.scan.waitForFinish({ client_uuid: reg.uuid, scan_uuid: uuid });
    const [item] = (await boxhub.scan.itemData({ client_uuid: reg.uuid, scan_uuid: uuid })).items;
    assert.ok(item?.cipher);
    const data = Buffer.from(await (await fetch(item.temp_download_url!)).arrayBuffer());
    const pdf = await decryptScanItem({ privateKey: keys.privateKey, scanUuid: uuid, item, data });
    assert.equal((await PDFDocument.load(pdf)).getPageCount(), 2);
    const saved = await boxhub.scan.download(item, join(dir, 'item.enc'));
    assert.equal(saved.md5, item.check_sum);
    await decryptScanItemFile({
      privateKey: keys.privateKey,
      scanUuid: uuid,
      item,
      path: join(dir, 'item.enc'),
      out: join(dir, 'item.pdf'),
    });
    assert.deepEqual(readFileSync(join(dir, 'item.pdf')), pdf);
    const altered = Buffer.from(data);
    altered[100]! ^= 1;
    await assert.rejects(
      decryptScanItem({ privateKey: keys.privateKey, scanUuid: uuid, item, data: altered }),
      (e: unknown) => e instanceof E2eError && /MD5/.test(e.message),
    );
    await assert.rejects(
      decryptScanItem({
        privateKey: keys.privateKey,
        scanUuid: uuid,
        item: { ...item, check_sum: undefined },
        data: altered,
      }),
      /GCM tag/,
    );

    const doc = await PDFDocument.create();
    doc.addPage([595.28, 841.89]);
    const enc = await encryptForBox({
      file: await doc.save(),
      boxPublicKey: device.e2e_public_key!,
      clientUuid: reg.uuid,
    });
    const p = await boxhub.print.create({
      client_uuid: reg.uuid,
      file_type: 'pdf',
      file_content: enc.file.toString('base64'),
      file_check_sum: enc.checkSum,
      options: { encrypt: true, cipher: enc.cipher },
    });
    const done = await boxhub.print.waitForFinish({ client_uuid: reg.uuid, print_uuid: p.uuid! });
    assert.equal(done.error_code, 0);
    assert.equal(done.pages, 1);

    writeFileSync(
      join(dir, 'two.pdf'),
      await (async () => {
        const d = await PDFDocument.create();
        d.addPage([595.28, 841.89]);
        d.addPage([595.28, 841.89]);
        return d.save();
      })(),
    );
    const f = await encryptFileForBox({
      path: join(dir, 'two.pdf'),
      out: join(dir, 'two.enc'),
      boxPublicKey: device.e2e_public_key!,
      clientUuid: reg.uuid,
    });
    const q = await boxhub.print.create({
      client_uuid: reg.uuid,
      file_type: 'pdf',
      file_content: readFileSync(join(dir, 'two.enc')).toString('base64'),
      file_check_sum: f.checkSum,
      options: { encrypt: true, cipher: f.cipher },
    });
    assert.equal((await boxhub.print.waitForFinish({ client_uuid: reg.uuid, print_uuid: q.uuid! })).pages, 2);
  } finally {
    await box.agent.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
