// Scan create's rules (docs/api.md, "POST /api/scan/create"): every option checked with its
// defaults and bounds and against what this box's scanner reports, the preconditions
// answered with their own codes, hostile input answered with the envelope, and one scan per
// box, atomically, however many creates race.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '@boxhub/server';
import { startServer } from '@boxhub/server/server.ts';
import { BoxhubError, ErrorCode, type Body } from '@boxhub/sdk';
import { engine, eventually } from '@boxhub/server/testing/harness.ts';
import { refusal, rigSdk, startRig, type Rig } from './fixtures.ts';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(() => rig.close());

type Options = Body<'/api/scan/create'>['options'];
/** A create the SDK sends, as an application would. */
const create = (client_uuid: string, options?: Options) =>
  rig.sdk.scan.create({ client_uuid, ...(options === undefined ? {} : { options }) });
/** Raw: the bounds test sends values of the wrong type and unknown fields, which the SDK's types refuse. */
const createRaw = (options: unknown, client_uuid?: string) =>
  rig.api.post('/api/scan/create', { client_uuid, ...(options === undefined ? {} : { options }) });

describe('options', () => {
  test('every bound of the spec, with a message naming the field', async () => {
    const box = await rig.box();
    const cases: Array<[unknown, RegExp]> = [
      [{ quality: 0 }, /options\.quality/],
      [{ quality: 101 }, /options\.quality/],
      [{ quality: '90' }, /options\.quality/],
      [{ resolution: 250 }, /options\.resolution/],
      [{ continuous_wait: -1 }, /options\.continuous_wait/],
      [{ direct_page_size: 0 }, /options\.direct_page_size/],
      [{ direct_page_size: 11 }, /options\.direct_page_size/],
      [{ color_type: 2 }, /options\.color_type/],
      [{ direct_mode: 3 }, /options\.direct_mode/],
      [{ callback_url: `https://example.com/${'a'.repeat(200)}` }, /options\.callback_url/],
      [{ callback_url: 'ftp://example.com/x' }, /callback_url/],
      [{ duplex: 'yes' }, /options\.duplex/],
      [{ unknown_option: 1 }, /unknown field 'unknown_option'/],
      [{ direct_mode: 1 }, /direct_addr is required/],
      [{ direct_addr: 'https://93.184.215.14/in' }, /direct_mode is 0/],
    ];
    for (const [options, msg] of cases) {
      const r = await createRaw(options, box.uuid);
      assert.equal(r.code, 10001, `${JSON.stringify(options)}: ${r.msg}`);
      assert.match(r.msg, msg, JSON.stringify(options));
      assert.equal(r.data, null);
    }
    assert.deepEqual(
      await rig.sdk.scan.current({ client_uuid: box.uuid }),
      { exist: false },
      'nothing was created by a refused request',
    );
  });

  test("direct transfer is checked (URL guard, the #h2c hint); encryption needs the application's key", async () => {
    const box = await rig.box();
    // An IP literal: the guard judges it without DNS (this machine resolves no public names).
    // Every direct option passes; the empty feeder is what stops this one (30203).
    const d = await refusal(
      create(box.uuid, { direct_mode: 2, direct_addr: 'https://93.184.215.14/in', direct_page_size: 4 }),
    );
    assert.equal(d.code, 30203, d.msg);
    const h2c = await refusal(create(box.uuid, { direct_mode: 1, direct_addr: 'http://93.184.215.14/in#h2c' }));
    assert.equal(h2c.code, 30203, h2c.msg);
    const tlsH2c = await refusal(create(box.uuid, { direct_mode: 1, direct_addr: 'https://93.184.215.14/in#h2c' }));
    assert.equal(tlsH2c.code, 10001);
    assert.match(tlsH2c.msg, /#h2c.*ALPN/);
    const other = await refusal(create(box.uuid, { direct_mode: 1, direct_addr: 'http://93.184.215.14/in#x' }));
    assert.equal(other.code, 10001);
    assert.match(other.msg, /fragment/);
    // Encryption is built (docs/encryption.md, e2e encryption.test.ts): without a key, 20601.
    const e = await refusal(create(box.uuid, { encrypt: true }));
    assert.equal(e.code, 20601);
    assert.match(e.msg, /public key/);
    // The address goes through the URL guard (private networks are off on this server).
    const p = await refusal(create(box.uuid, { direct_mode: 1, direct_addr: 'http://127.0.0.1:9/in' }));
    assert.equal(p.code, 10008);
  });

  test("the scanner's own resolutions and duplex", async () => {
    const box = await rig.box();
    await rig.load(box, 1);
    const r = await refusal(create(box.uuid, { resolution: 1200 }));
    assert.equal(r.code, 30205);
    assert.match(r.msg, /1200 dpi.*100, 150, 200, 240, 300, 400, 600/);
  });
});

describe('preconditions', () => {
  test('unknown or foreign device 30002, offline 30004, no scanner 30201, jammed 30202, empty feeder 30203', async () => {
    assert.equal((await refusal(create(randomUUID()))).code, 30002);
    const other = await rig.t.createApp('other');
    const foreign = await rig.box();
    assert.equal(
      (await refusal(rigSdk(rig.t.url, other.api_key).scan.create({ client_uuid: foreign.uuid }))).code,
      30002,
    );

    const off = await rig.box({ connect: false });
    assert.equal((await refusal(create(off.uuid))).code, 30004);

    const noScanner = await rig.box({ scanner: 'sim:?connected=0' });
    assert.equal((await refusal(create(noScanner.uuid))).code, 30201);

    const jammed = await rig.box({ scanner: 'sim:?fault=jammed&paper=3' });
    await eventually(async () => (await refusal(create(jammed.uuid))).code === 30202, 'jammed scanner refused');

    const empty = await rig.box();
    const r = await refusal(create(empty.uuid));
    assert.equal(r.code, 30203);
    assert.match(r.msg, /continuous mode/);
    // Continuous mode waits for paper, so an empty feeder is fine (the SDK resolves on code 0 only).
    await create(empty.uuid, { continuous: true, continuous_wait: 0 });
    await rig.sdk.scan.stop({ client_uuid: empty.uuid });
  });

  test('hostile bodies on every scan endpoint get the envelope and a clear message', async () => {
    // Raw client throughout: malformed JSON, wrong types and oversized bodies, which the SDK never sends.
    const box = await rig.box();
    for (const path of [
      '/api/scan/create',
      '/api/scan/stop',
      '/api/scan/current',
      '/api/scan/info',
      '/api/scan/item_data',
    ]) {
      for (const [body, code] of [
        ['{', 10002],
        ['[]', 10001],
        ['{"client_uuid":5}', 10001],
        [`{"client_uuid":"${'x'.repeat(100)}"}`, 10001],
        ['{"__proto__":{"a":1}}', 10001],
      ] as const) {
        const r = await rig.api.raw('POST', path, { body, headers: { 'content-type': 'application/json' } });
        assert.equal(r.status, 200, `${path} ${body}`);
        const env = r.json();
        assert.equal(env.code, code, `${path} ${body}: ${env.msg}`);
        assert.ok(env.msg.length > 5);
      }
      const big = await rig.api.raw('POST', path, {
        body: JSON.stringify({ client_uuid: box.uuid, pad: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(big.json().code, 10003, `${path}: oversized body`);
    }
    for (const page of [0, 1001, 1.5]) {
      const r = await rig.api.post('/api/scan/item_data', { client_uuid: box.uuid, scan_uuid: randomUUID(), page });
      assert.equal(r.code, 10001, `page ${page}`);
    }
    const nf = await refusal(rig.sdk.scan.info({ client_uuid: box.uuid, scan_uuid: randomUUID() }));
    assert.equal(nf.code, 20404);
  });
});

describe('one scan per box', () => {
  test('100 concurrent creates: exactly one wins, every other answers 30204 with its uuid', async () => {
    const box = await rig.box();
    await rig.load(box, 1);
    const rs = await Promise.allSettled(
      Array.from({ length: 100 }, () => create(box.uuid, { continuous: true, continuous_wait: 0 })),
    );
    const won = rs.filter((r) => r.status === 'fulfilled');
    const lost = rs.flatMap((r) => (r.status === 'rejected' ? [r.reason as BoxhubError] : []));
    assert.equal(
      won.length,
      1,
      lost
        .filter((e) => e.code !== 30204)
        .map((e) => `${e.code} ${e.msg}`)
        .join('; '),
    );
    const winner = won[0]!.value.uuid!;
    for (const e of lost) {
      assert.ok(e instanceof BoxhubError, String(e));
      assert.equal(e.code, 30204);
      assert.equal(e.dataOf(ErrorCode.SCAN_EXISTS)?.exist_uuid, winner);
    }
    await rig.sdk.scan.stop({ client_uuid: box.uuid });
  });

  if (engine === 'external') {
    test('two server nodes on PostgreSQL: 100 creates split between them, exactly one wins', async () => {
      const second = await startServer(
        loadConfig({
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'silent',
          DATABASE_URL: process.env.BOXHUB_TEST_DATABASE_URL!,
          MQTT_URL: process.env.BOXHUB_TEST_MQTT_URL!,
          BOXHUB_MQTT_SHARE_GROUP: rig.t.server.config.mqttShareGroup,
          BOXHUB_NODE_ID: 'second',
          BOXHUB_DATA_DIR: rig.t.dataDir,
        }),
        { pgSchema: rig.t.pgSchema!, logger: pino({ level: 'silent' }) },
      );
      try {
        const box = await rig.box();
        await rig.load(box, 1);
        const sdks = [rig.sdk, rigSdk(second.url, rig.app.api_key)];
        const rs = await Promise.allSettled(
          Array.from({ length: 100 }, (_, i) =>
            sdks[i % 2]!.scan.create({ client_uuid: box.uuid, options: { continuous: true, continuous_wait: 0 } }),
          ),
        );
        const won = rs.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1);
        assert.ok(
          rs
            .flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
            .every(
              (e) => e instanceof BoxhubError && e.dataOf(ErrorCode.SCAN_EXISTS)?.exist_uuid === won[0]!.value.uuid,
            ),
        );
        await rig.sdk.scan.stop({ client_uuid: box.uuid });
      } finally {
        await second.close();
      }
    });
  }
});
