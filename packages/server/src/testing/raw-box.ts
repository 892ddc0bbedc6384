// A box played by a bare MQTT client, as a broken or hostile box would be: it logs in with the
// device's own credentials, listens to its command topic and publishes what a test gives it.
import mqtt from 'mqtt';
import { topics, type JobEvent } from '@boxhub/protocol';

export interface RawBox {
  /** The ids of the job events the server has acknowledged (`events.ack` commands), in order. */
  acks: string[];
  /** Publishes a job event as the box (QoS 1). */
  event(e: JobEvent): Promise<void>;
  close(): Promise<void>;
}

export async function rawBox(mqttUrl: string, box: { uuid: string; secret: string }): Promise<RawBox> {
  const client = await mqtt.connectAsync(mqttUrl, {
    clientId: box.uuid,
    username: box.uuid,
    password: box.secret,
    protocolVersion: 4,
    reconnectPeriod: 0,
  });
  const acks: string[] = [];
  client.on('message', (_topic, payload) => {
    const m = JSON.parse(payload.toString('utf8')) as { type?: string; params?: { ids?: string[] } };
    if (m.type === 'events.ack') acks.push(...(m.params?.ids ?? []));
  });
  await client.subscribeAsync(topics.cmd(box.uuid), { qos: 1 });
  return {
    acks,
    event: async (e) => {
      await client.publishAsync(topics.event(box.uuid), JSON.stringify(e), { qos: 1 });
    },
    close: () => client.endAsync(true),
  };
}
