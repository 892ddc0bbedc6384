// `boxhub serve [--demo]`: runs the service. With --demo (what `npm start` does) it also makes
// a demo application and a simulated box connected to the embedded broker, so the whole flow
// can be tried at once, and writes {base_url, api_key, device_code} to <data dir>/demo.json.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSimulatedBox, type SimulatedBox } from '@boxhub/agent';
import { loadConfig, startServer, type RunningServer } from '@boxhub/server';
import { guard, parse } from '../args.ts';

export const summary = 'run the service: serve [--demo]';

interface DemoFiles { demo: { base_url: string; api_key: string; device_code: string }; box: { uuid: string; secret: string } }

async function prepareDemo(server: RunningServer): Promise<DemoFiles> {
  const demoPath = join(server.config.dataDir, 'demo.json');
  const boxPath = join(server.config.dataDir, 'demo-box.json');
  const base_url = server.config.publicUrl ?? server.url;
  // Reuse what an earlier run made, as long as the database still knows it.
  if (existsSync(demoPath) && existsSync(boxPath)) {
    try {
      const demo = JSON.parse(readFileSync(demoPath, 'utf8')) as DemoFiles['demo'];
      const box = JSON.parse(readFileSync(boxPath, 'utf8')) as DemoFiles['box'];
      const app = await server.services.applications.authenticate(demo.api_key);
      const device = await server.repos.devices.findByUuid(box.uuid);
      if (app && device) {
        const files = { demo: { ...demo, base_url }, box };
        writeFileSync(demoPath, `${JSON.stringify(files.demo, null, 2)}\n`);
        return files;
      }
    } catch { /* made anew below */ }
  }
  const app = await server.services.applications.create({ name: `demo-${Date.now()}`, ess: true });
  const device = await server.registerDevice({ code: `DEMO${Math.floor(Math.random() * 1e6).toString().padStart(6, '0')}`, model: 'BX-SIM' });
  const files = { demo: { base_url, api_key: app.api_key, device_code: device.code }, box: { uuid: device.uuid, secret: device.secret } };
  writeFileSync(demoPath, `${JSON.stringify(files.demo, null, 2)}\n`, { mode: 0o600 });
  writeFileSync(boxPath, `${JSON.stringify(files.box, null, 2)}\n`, { mode: 0o600 });
  chmodSync(demoPath, 0o600);
  return files;
}

export function run(argv: string[]): Promise<number> {
  return guard(async () => {
    const { values } = parse(argv, { demo: { type: 'boolean', default: false } });
    const config = loadConfig();
    const server = await startServer(config);
    let box: SimulatedBox | undefined;
    if (values.demo) {
      const files = await prepareDemo(server);
      box = createSimulatedBox({ url: server.mqttUrl, uuid: files.box.uuid, secret: files.box.secret });
      box.agent.start();
      const k = files.demo.api_key;
      process.stdout.write([
        '',
        `boxhub is running at ${files.demo.base_url}`,
        `  API docs:      ${files.demo.base_url}/docs`,
        `  demo API key:  ${k}`,
        `  demo box code: ${files.demo.device_code} (a simulated box with printer and scanner, connected)`,
        `  box link:      ${server.mqttUrl}`,
        `  written to:    ${join(config.dataDir, 'demo.json')}`,
        '',
        'Try it:',
        `  curl -s -H 'Authorization: Bearer ${k}' '${files.demo.base_url}/api/client/get_uuid?code=${files.demo.device_code}'`,
        '',
      ].join('\n'));
    } else {
      process.stdout.write(`boxhub is running at ${server.url} (box link ${server.mqttUrl})\n`);
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        void (async () => {
          await box?.agent.stop();
          await server.close();
          resolve();
        })();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  });
}
