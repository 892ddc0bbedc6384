// End-to-end fixtures: a real server plus real simulated boxes on loopback.
import { createSimulatedBox, type SimulatedBox } from '@boxhub/agent';
import { eventually, startTestServer, type ApiClient, type TestServer, type TestServerOptions } from '@boxhub/server/testing/harness.ts';

export interface Rig {
  t: TestServer;
  api: ApiClient;
  /** Registers a box, binds it to the rig's application and connects its agent. */
  box(opts?: { printer?: string; scanner?: string; url?: string; keepaliveSec?: number; rebootMs?: number; connect?: boolean }): Promise<SimulatedBox & { uuid: string; secret: string }>;
  online(uuid: string, want?: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startRig(o: TestServerOptions = {}): Promise<Rig> {
  const t = await startTestServer(o);
  const { api } = await t.createApp('rig');
  const boxes: SimulatedBox[] = [];
  const online = async (uuid: string, want = true) => {
    await eventually(async () => (await api.get<{ client?: { online?: boolean } }>('/api/client/info', { uuid })).data?.client?.online === want, `box ${uuid} online=${want}`);
  };
  return {
    t, api, online,
    async box(b = {}) {
      const d = await t.registerDevice();
      const bound = await api.post('/api/client/bind', { uuid: d.uuid, name: `box ${d.code}` });
      if (bound.code !== 0) throw new Error(`bind failed: ${bound.msg}`);
      const box = createSimulatedBox({
        url: b.url ?? t.mqttUrl, uuid: d.uuid, secret: d.secret,
        ...(b.printer ? { printer: b.printer } : {}), ...(b.scanner ? { scanner: b.scanner } : {}),
        keepaliveSec: b.keepaliveSec ?? 30, rebootMs: b.rebootMs ?? 200, backoff: { baseMs: 50, maxMs: 500 },
      });
      boxes.push(box);
      if (b.connect !== false) {
        box.agent.start();
        await online(d.uuid);
      }
      return Object.assign(box, { uuid: d.uuid, secret: d.secret });
    },
    async close() {
      for (const b of boxes) await b.agent.stop();
      await t.close();
    },
  };
}
