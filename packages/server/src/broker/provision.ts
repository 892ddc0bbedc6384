// Gives a box its broker login outside a running server (`boxhub device register` in the CLI).
// The embedded broker checks the database itself, so there is nothing to do; an external
// broker gets the same dynsec client and role the server creates (ExternalBroker).
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { ExternalBroker } from './external-broker.ts';

export async function provisionOnBroker(config: Config, uuid: string, secret: string): Promise<void> {
  await withBroker(config, (b) => b.provisionDevice(uuid, secret));
}

/** Removes a box's login (a revoked secret) outside a running server. */
export async function deprovisionOnBroker(config: Config, uuid: string): Promise<void> {
  await withBroker(config, (b) => b.deprovisionDevice(uuid));
}

async function withBroker(config: Config, work: (b: ExternalBroker) => Promise<void>): Promise<void> {
  if (!config.mqttUrl) return;
  // A client id of its own: reusing the server's (boxhub-server-{nodeId}) would log it out.
  const broker = await ExternalBroker.connect(config.mqttUrl, config.nodeId, {
    clientId: `boxhub-cli-${randomBytes(6).toString('hex')}`,
    connectTimeoutMs: 10_000,
  });
  try {
    await work(broker);
  } finally {
    await broker.close();
  }
}
