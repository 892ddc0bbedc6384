// A box's end of session that its next session's `online` has overtaken in the gateway's queue
// is not applied (docs/box-protocol.md, "Presence"): a broker's return brings every box's will
// while the boxes are already back. An `online` is always applied, and so is an end of session
// that nothing newer follows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { BoxGateway, type DevicePresence } from './gateway.ts';
import { systemClock } from '../clock.ts';
import type { Broker, MessageHandler } from '../broker/types.ts';

function setup() {
  const handlers = new Map<string, MessageHandler>();
  const broker = {
    subscribe: async (filter: string, handler: MessageHandler) => {
      handlers.set(filter, handler);
    },
  } as unknown as Broker;
  const applied: string[] = [];
  // The first lookup of the box is held, so what the box sends meanwhile waits in its queue.
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const devices: DevicePresence = {
    findByUuid: async (uuid) => {
      await held;
      return { uuid } as never;
    },
    markOnline: async (_uuid, session) => {
      applied.push(`online ${session}`);
      return true;
    },
    markOffline: async (_uuid, session) => {
      applied.push(`offline ${session}`);
      return true;
    },
    saveState: async () => undefined,
  };
  const gateway = new BoxGateway({
    broker,
    devices,
    clock: systemClock,
    nodeId: 'node-1',
    log: pino({ level: 'silent' }),
    commandTimeoutMs: 1000,
  });
  const presence = (online: boolean, session: string) =>
    handlers.get('box/+/presence')!('box/box-1/presence', Buffer.from(JSON.stringify({ v: 1, online, session })));
  return { gateway, presence, applied, release };
}

test("a will overtaken by the box's next online is not applied; the online is", async () => {
  const { gateway, presence, applied, release } = setup();
  await gateway.start();
  presence(true, 'A'); // held in the lookup
  presence(false, 'A'); // its will
  presence(true, 'B'); // the box is back
  release();
  await gateway.drain();
  assert.deepEqual(applied, ['online A', 'online B']);
});

test('an end of session with nothing newer behind it is applied, and so is every online', async () => {
  const { gateway, presence, applied, release } = setup();
  await gateway.start();
  presence(true, 'A');
  presence(false, 'A');
  presence(true, 'B');
  presence(false, 'B');
  release();
  await gateway.drain();
  assert.deepEqual(applied, ['online A', 'online B', 'offline B']);
});
