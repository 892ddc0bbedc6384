// Gives a box its broker login outside a running server (`boxhub device register` in the CLI).
// The embedded broker checks the database itself, so there is nothing to do; an external
// broker gets the same dynsec client and role the server creates (ExternalBroker).
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { ExternalBroker } from './external-broker.ts';

export async function provisionOnBroker(config: Config, uuid: string, secret: string): Promise<void> {
  if (config.mqttUrl) await withBroker(config.mqttUrl, config, (b) => b.provisionDevice(uuid, secret));
}

/** Removes a box's login (a revoked secret) outside a running server. */
export async function deprovisionOnBroker(config: Config, uuid: string): Promise<void> {
  if (config.mqttUrl) await withBroker(config.mqttUrl, config, (b) => b.deprovisionDevice(uuid));
}

/**
 * Gives `work` a provisioner on one broker connection, for many boxes at once (`boxhub device
 * import`): each connection first checks the broker (capabilities.ts), several round trips, so
 * a hundred boxes on a connection each took a minute and a half on a slow machine.
 */
export async function withProvisioner<T>(
  config: Config,
  work: (provision: (uuid: string, secret: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  if (!config.mqttUrl) return work(async () => {});
  return withBroker(config.mqttUrl, config, (b) => work((uuid, secret) => b.provisionDevice(uuid, secret)));
}

async function withBroker<T>(url: string, config: Config, work: (b: ExternalBroker) => Promise<T>): Promise<T> {
  // A client id of its own: reusing the server's (boxhub-server-{nodeId}) would log it out.
  const broker = await ExternalBroker.connect(url, config.nodeId, {
    clientId: `boxhub-cli-${randomBytes(6).toString('hex')}`,
    connectTimeoutMs: 10_000,
  });
  try {
    return await work(broker);
  } finally {
    await broker.close();
  }
}
