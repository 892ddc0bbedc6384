// A box gateway on a stand-in broker, for the gateway's own tests (box-link/*.test.ts): the
// shutdown, the order of presences and the command wait are the gateway's logic, and a fault
// such as a lookup held while the box sends on cannot be caused at will on a real broker.
import pino from 'pino';
import { BoxGateway, type DevicePresence } from '../box-link/gateway.ts';
import { systemClock } from '../clock.ts';
import type { Broker, MessageHandler } from '../broker/types.ts';

/** A gateway of node `node-1` on `broker`, logging nothing. */
export function gatewayOn(broker: Broker, devices: DevicePresence, commandTimeoutMs = 1000): BoxGateway {
  return new BoxGateway({
    broker,
    devices,
    clock: systemClock,
    nodeId: 'node-1',
    log: pino({ level: 'silent' }),
    commandTimeoutMs,
  });
}

/**
 * A gateway whose lookup of box `box-1` is held until `release()`, so that what the box sends
 * meanwhile waits in the gateway's queue; `presence()` delivers one of its presences and
 * `applied` lists the presences the gateway has applied, in order.
 */
export function heldGateway(): {
  gateway: BoxGateway;
  presence: (online: boolean, session: string) => void;
  applied: string[];
  release: () => void;
} {
  const handlers = new Map<string, MessageHandler>();
  const broker = {
    subscribe: async (filter: string, handler: MessageHandler) => {
      handlers.set(filter, handler);
    },
  } as unknown as Broker;
  const applied: string[] = [];
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
  const gateway = gatewayOn(broker, devices);
  const presence = (online: boolean, session: string) =>
    handlers.get('box/+/presence')!('box/box-1/presence', Buffer.from(JSON.stringify({ v: 1, online, session })));
  return { gateway, presence, applied, release };
}
