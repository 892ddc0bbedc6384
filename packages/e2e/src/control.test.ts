// Device control end to end: HTTP → server → MQTT → agent → ack → answer (docs/control.md).
import { offsetClock } from '@boxhub/server/clock.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { topics } from '@boxhub/protocol';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { refusal, startRig, type Rig } from './fixtures.ts';

// The server's clock, moved forward to cross the 24-hour flush window without waiting.
let offset = 0;
const clock = offsetClock(() => offset);
let rig: Rig;
before(async () => {
  rig = await startRig({ clock, commandTimeoutMs: 1500 });
});
after(() => rig.close());

describe('buzz and reboot', () => {
  test('buzz plays the pattern on the box, default gap 200 ms', async () => {
    const box = await rig.box();
    // Raw once: this checks the success envelope itself, which the SDK unwraps.
    assert.deepEqual(await rig.api.post('/api/control/buzz', { client_uuid: box.uuid, buzz: [100, 300, 100] }), {
      code: 0,
      msg: 'success',
      data: null,
    });
    await eventually(() => box.buzzer.played.length === 1, 'beeps');
    assert.deepEqual(box.buzzer.played[0], { beeps: [100, 300, 100], gap: 200 });
    assert.equal(
      await rig.sdk.control.buzz({ client_uuid: box.uuid, buzz: [50], gap: 0 }),
      undefined,
      'data null: the SDK resolves to undefined',
    );
    await eventually(() => box.buzzer.played.length === 2, 'second pattern');
    assert.deepEqual(box.buzzer.played[1], { beeps: [50], gap: 0 });
  });

  test('reboot: acknowledged, the box goes away and comes back', async () => {
    const box = await rig.box({ rebootMs: 300 });
    const before = (await rig.sdk.devices.info({ uuid: box.uuid })).client!.last_connect_at!;
    await rig.sdk.control.reboot({ client_uuid: box.uuid }); // resolves only on code 0
    await eventually(() => box.reboots.length === 1, 'reboot on the box');
    await eventually(async () => {
      const c = (await rig.sdk.devices.info({ uuid: box.uuid })).client!;
      return c.online && c.last_connect_at! > before && (c.last_disconnect_at ?? 0) >= before;
    }, 'box back online after reboot');
  });

  test('a box stopped while a reboot keeps it away stays stopped', async () => {
    const box = await rig.box({ rebootMs: 300 });
    await rig.sdk.control.reboot({ client_uuid: box.uuid });
    await eventually(() => box.reboots.length === 1, 'reboot on the box');
    await box.agent.stop();
    await box.rebooted[0];
    assert.equal(box.agent.link.started, false, 'the link was not started again');
    assert.equal(box.agent.link.connected, false);
  });
});

describe('inkjet maintenance', () => {
  test('head clean and nozzle check run on an inkjet printer with strict mode', async () => {
    const box = await rig.box();
    await rig.sdk.control.headClean({ client_uuid: box.uuid }); // resolves only on code 0
    await rig.sdk.control.nozzleCheck({ client_uuid: box.uuid });
    assert.deepEqual(box.printer.history, ['head_clean', 'nozzle_check']);
  });

  test('refused for laser printers, printers without strict mode, and unsupported models', async () => {
    const laser = await rig.box({ printer: 'sim:?kind=laser' });
    const r = await refusal(rig.sdk.control.headClean({ client_uuid: laser.uuid }));
    assert.equal(r.code, 30006);
    assert.match(r.msg, /only for inkjet printers that support strict mode; this printer is laser/);
    const loose = await rig.box({ printer: 'sim:?kind=inkjet&strict=0' });
    assert.equal((await refusal(rig.sdk.control.nozzleCheck({ client_uuid: loose.uuid }))).code, 30006);
    const partial = await rig.box({ printer: 'sim:?kind=inkjet&maintenance=head_clean&model=ET-100' });
    const p = await refusal(rig.sdk.control.powerInkFlush({ client_uuid: partial.uuid }));
    assert.equal(p.code, 30006);
    assert.match(p.msg, /ET-100.*power_ink_flush/);
    assert.deepEqual(
      [laser, loose, partial].flatMap((b) => b.printer.history),
      [],
    );
  });

  test('a missing printer answers 30301', async () => {
    const box = await rig.box({ printer: 'sim:?connected=0' });
    assert.equal((await refusal(rig.sdk.control.headClean({ client_uuid: box.uuid }))).code, 30301);
  });

  test('power ink flush: once per 24 hours; a flush the box could not do does not count', async () => {
    const box = await rig.box();
    box.printer.setFault('media-jam');
    const printerError = async () => (await rig.sdk.devices.info({ uuid: box.uuid })).client?.printer?.error_code;
    await eventually(async () => (await printerError()) === 4, 'jam reported');
    const jammed = await refusal(rig.sdk.control.powerInkFlush({ client_uuid: box.uuid }));
    assert.equal(jammed.code, 30009, jammed.msg);
    box.printer.setFault(null);
    await eventually(async () => (await printerError()) === 0, 'jam cleared');

    const before = clock.now();
    await rig.sdk.control.powerInkFlush({ client_uuid: box.uuid }); // resolves only on code 0
    const flushedAt = (await rig.t.server.repos.devices.findByUuid(box.uuid))!.last_power_ink_flush_at!;
    assert.ok(flushedAt >= before && flushedAt <= clock.now());
    offset += 23 * 3600_000;
    const again = await refusal(rig.sdk.control.powerInkFlush({ client_uuid: box.uuid }));
    assert.equal(again.code, 30007);
    assert.match(again.msg, /once per 24 hours; the next is allowed after /);
    // docs/errors.md and docs/control.md: data.next_allowed_at (Unix ms) says when.
    const { next_allowed_at } = again.data as { next_allowed_at: number };
    assert.equal(next_allowed_at, flushedAt + 24 * 3600_000);
    assert.match(again.msg, new RegExp(new Date(next_allowed_at).toISOString()));
    offset += 3600_000 + 1000;
    await rig.sdk.control.powerInkFlush({ client_uuid: box.uuid });
    assert.deepEqual(box.printer.history, ['power_ink_flush', 'power_ink_flush']);
  });

  test('concurrent flush requests: exactly one goes through', async () => {
    const box = await rig.box();
    const rs = await Promise.allSettled(
      Array.from({ length: 4 }, () => rig.sdk.control.powerInkFlush({ client_uuid: box.uuid })),
    );
    assert.deepEqual(
      rs.map((r) => (r.status === 'fulfilled' ? 0 : (r.reason as { code: unknown }).code)).sort(),
      [0, 30007, 30007, 30007],
    );
    assert.deepEqual(box.printer.history, ['power_ink_flush']);
  });
});

describe('when the box cannot answer', () => {
  test('offline: 30004, before and after the box was connected', async () => {
    const box = await rig.box({ connect: false });
    const never = await refusal(rig.sdk.control.buzz({ client_uuid: box.uuid, buzz: [100] }));
    assert.equal(never.code, 30004);
    // The message names what to check (docs/errors.md, 30004).
    assert.equal(
      never.msg,
      "device is offline: it has never connected; check that its agent runs with this device's uuid and secret and reaches the service's box link (MQTT)",
    );
    await box.agent.start();
    await rig.online(box.uuid);
    await box.agent.stop();
    await rig.online(box.uuid, false);
    const r = await refusal(rig.sdk.control.reboot({ client_uuid: box.uuid }));
    assert.equal(r.code, 30004);
    assert.match(
      r.msg,
      /^device is offline since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: check that the box is powered on, on the network, and that its agent reaches the service's box link \(MQTT\)$/,
    );
  });

  test('no acknowledgement in time: 30005; refusals carry their reason', async () => {
    const d = await rig.t.registerDevice();
    await rig.sdk.devices.bind({ uuid: d.uuid, name: 'silent' });
    // A box that is connected and online but answers only what this test tells it to.
    const raw = await mqtt.connectAsync(rig.t.mqttUrl, {
      clientId: d.uuid,
      username: d.uuid,
      password: d.secret,
      protocolVersion: 4,
      clean: true,
    });
    let answer: Record<string, unknown> | undefined;
    raw.on('message', (_t, payload) => {
      const cmd = JSON.parse(payload.toString()) as { id: string; reply_to: string };
      if (answer)
        raw
          .publishAsync(topics.ack(d.uuid, cmd.reply_to), JSON.stringify({ v: 1, id: cmd.id, ...answer }), { qos: 1 })
          .catch(() => undefined);
    });
    await raw.subscribeAsync(topics.cmd(d.uuid), { qos: 1 });
    await raw.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session: 's1' }), {
      qos: 1,
      retain: true,
    });
    await rig.online(d.uuid);
    try {
      const started = Date.now();
      const r = await refusal(rig.sdk.control.buzz({ client_uuid: d.uuid, buzz: [100] }));
      assert.equal(r.code, 30005);
      assert.match(r.msg, /did not acknowledge 'buzz' within 1500 ms/);
      assert.ok(Date.now() - started >= 1400);
      answer = { ok: false, reason: 'busy', message: 'printing' };
      const busy = await refusal(rig.sdk.control.reboot({ client_uuid: d.uuid }));
      assert.deepEqual(
        { code: busy.code, msg: busy.msg, data: busy.data },
        { code: 30009, msg: 'device is busy: printing', data: null },
      );
      answer = { ok: false, reason: 'not_supported' };
      assert.equal((await refusal(rig.sdk.control.reboot({ client_uuid: d.uuid }))).code, 30006);
      answer = { ok: false, reason: 'failed', message: 'disk full' };
      assert.match((await refusal(rig.sdk.control.reboot({ client_uuid: d.uuid }))).msg, /could not reboot: disk full/);
      answer = { ok: true };
      await rig.sdk.control.reboot({ client_uuid: d.uuid }); // resolves only on code 0
    } finally {
      await raw.endAsync();
    }
  });

  test('power ink flush without an acknowledgement keeps the 24-hour window (the box may have flushed)', async () => {
    const d = await rig.t.registerDevice();
    await rig.sdk.devices.bind({ uuid: d.uuid, name: 'mute inkjet' });
    const raw = await mqtt.connectAsync(rig.t.mqttUrl, {
      clientId: d.uuid,
      username: d.uuid,
      password: d.secret,
      protocolVersion: 4,
      clean: true,
    });
    let commands = 0;
    raw.on('message', () => {
      commands++;
    }); // receives, never answers
    await raw.subscribeAsync(topics.cmd(d.uuid), { qos: 1 });
    const printer = {
      connected: true,
      supported: true,
      error_code: 0,
      kind: 'inkjet',
      strict: true,
      maintenance: ['power_ink_flush'],
    };
    await raw.publishAsync(
      topics.state(d.uuid),
      JSON.stringify({ v: 1, at: Date.now(), model: 'BX-1', printer, scanner: { connected: false, supported: false } }),
      { qos: 1, retain: true },
    );
    await raw.publishAsync(topics.presence(d.uuid), JSON.stringify({ v: 1, online: true, session: 'mute' }), {
      qos: 1,
      retain: true,
    });
    await rig.online(d.uuid);
    try {
      const first = await refusal(rig.sdk.control.powerInkFlush({ client_uuid: d.uuid }));
      assert.equal(first.code, 30005, first.msg);
      assert.equal(commands, 1, 'the command reached the box');
      const claimed = (await rig.t.server.repos.devices.findByUuid(d.uuid))!.last_power_ink_flush_at;
      assert.ok(claimed !== null, 'the window stays claimed');
      const second = await refusal(rig.sdk.control.powerInkFlush({ client_uuid: d.uuid }));
      assert.equal(second.code, 30007, second.msg);
      assert.equal((second.data as { next_allowed_at: number }).next_allowed_at, claimed + 24 * 3600_000);
      assert.equal(commands, 1, 'no second flush was sent');
    } finally {
      await raw.endAsync();
    }
  });
});
