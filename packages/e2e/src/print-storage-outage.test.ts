// File storage out of reach while an application prints (docs/chaos.md: "S3 down for 30 s"):
// print create answers 10503 (a dependency is unreachable; retry), not 10500, and works again
// once storage is back. S3 is s3rver behind a TCP proxy that refuses every connection while down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { startS3 } from '@boxhub/server/testing/s3rver.ts';
import { startTcpProxy } from '@boxhub/server/testing/tcp-proxy.ts';
import { startRig } from './fixtures.ts';

test('print create while S3 is unreachable answers 10503, and succeeds once it is back', async () => {
  const s3 = await startS3();
  const at = new URL(s3.endpoint);
  const proxy = await startTcpProxy(at.hostname, Number(at.port));
  const rig = await startRig({ env: { ...s3.env, BOXHUB_S3_ENDPOINT: `http://127.0.0.1:${proxy.port}` } });
  try {
    const box = await rig.box();
    const d = await PDFDocument.create();
    d.addPage([595.28, 841.89]);
    const body = {
      client_uuid: box.uuid,
      file_type: 'pdf',
      file_content: Buffer.from(await d.save()).toString('base64'),
      options: { number: 1 },
    };
    proxy.down(true);
    const refused = await rig.api.post('/api/print/create', body);
    assert.equal(refused.code, 10503, refused.msg);
    assert.match(refused.msg, /unreachable for now .*try again/);
    proxy.down(false);
    const ok = await rig.api.post('/api/print/create', body);
    assert.equal(ok.code, 0, ok.msg);
  } finally {
    await rig.close();
    await proxy.close();
    await s3.close();
  }
});
