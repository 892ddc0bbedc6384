// `boxhub serve [--demo]`: runs the service. With --demo (what `npm start` does) it also makes
// a demo application and a simulated box connected to the embedded broker, so the whole flow
// can be tried at once, and writes {base_url, api_key, device_code} to <data dir>/demo.json.
// The demo's class (demo-classroom.ts) fills in the card templates its printer prints.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimulatedBox } from '@boxhub/agent';
import type { RunningServer } from '@boxhub/server';
import type { Layout } from '@boxhub/recognizer';
import { pdfEnginesLine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { common, defineCommand } from '../command.ts';
import { EXIT, Failed, messageOf, UsageError } from '../exit.ts';

interface DemoFiles {
  demo: { base_url: string; api_key: string; device_code: string };
  box: { uuid: string; secret: string };
  appId: string;
}

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
        const files = { demo: { ...demo, base_url }, box, appId: app.id };
        writeFileSync(demoPath, `${JSON.stringify(files.demo, null, 2)}\n`);
        return files;
      }
    } catch {
      /* made anew below */
    }
  }
  const app = await server.services.applications.create({ name: `demo-${Date.now()}`, ess: true });
  const device = await server.registerDevice({
    code: `DEMO${Math.floor(Math.random() * 1e6)
      .toString()
      .padStart(6, '0')}`,
    model: 'BX-SIM',
  });
  const files = {
    demo: { base_url, api_key: app.api_key, device_code: device.code },
    box: { uuid: device.uuid, secret: device.secret },
    appId: app.id,
  };
  writeFileSync(demoPath, `${JSON.stringify(files.demo, null, 2)}\n`, { mode: 0o600 });
  writeFileSync(boxPath, `${JSON.stringify(files.box, null, 2)}\n`, { mode: 0o600 });
  chmodSync(demoPath, 0o600);
  return files;
}

export const command = defineCommand({
  summary: 'run the service (--demo: with a demo application and a simulated box)',
  usage: '[--demo] [--json]',
  description:
    'Runs the HTTP API, the web console and the box link (an embedded MQTT broker unless MQTT_URL\nis set) with the settings of the environment (docs/configuration.md). With --demo it also\nmakes a demo application and a simulated box and writes their address and key to\n<data dir>/demo.json, where the other commands find them; a card template printed on the\ndemo box is filled in by a simulated class and put in its feeder (README, "Feedback cards").\nStops on SIGINT/SIGTERM (exit 0), or when the external broker is found lacking what boxhub\nneeds after a reconnect (exit 1, docs/box-protocol-broker.md).',
  flags: {
    demo: { type: 'boolean', help: 'a demo application and a simulated box (what `npm start` runs)' },
    json: {
      ...common.json,
      help: "print one JSON line on stdout once the service is ready, and the\nservice's logs on stderr",
    },
  },
  json: '{url, mqtt_url, demo: {base_url, api_key, device_code, demo_file, printed_dir, sample_pdf} | null}',
  examples: ['boxhub serve --demo', 'DATABASE_URL=postgres://… MQTT_URL=mqtt://… HOST=0.0.0.0 boxhub serve'],
  async run(ctx) {
    const { loadConfig, startServer, ConfigError } = await import('@boxhub/server');
    let config;
    try {
      config = loadConfig();
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.message);
      throw e;
    }
    // The demo runs on one machine: its callbacks and direct transfers go to receivers on this
    // machine (`boxhub card run` listens on 127.0.0.1), which a deployment refuses by default.
    // BOXHUB_ALLOW_PRIVATE_NETWORKS=0 keeps them refused here too (docs/configuration.md).
    if (ctx.values.demo && process.env.BOXHUB_ALLOW_PRIVATE_NETWORKS === undefined)
      config = { ...config, allowPrivateNetworks: true };
    // With --json stdout is for the one ready line; the logs (pino, JSON lines) go to stderr.
    const { pino } = await import('pino');
    const logger = ctx.json ? pino({ level: config.logLevel }, pino.destination(2)) : undefined;
    let server: RunningServer;
    // A service that cannot start says why, naming the setting that fixes it, and exits 1
    // (docs/configuration.md, "When the service cannot start").
    try {
      server = await startServer(config, logger ? { logger } : {});
    } catch (e) {
      if (e instanceof Error && e.name === 'StartupError') throw new Failed(`cannot start: ${messageOf(e)}`);
      throw e;
    }
    let box: SimulatedBox | undefined;
    let stopClassroom: (() => void) | undefined;
    let demo: {
      base_url: string;
      api_key: string;
      device_code: string;
      demo_file: string;
      printed_dir: string;
      sample_pdf: string;
    } | null = null;
    if (ctx.values.demo) {
      const files = await prepareDemo(server);
      // The demo box has paper in its feeder (20 sheets, back again 30 s after it runs empty) and
      // a printer that renders every job it prints into <data dir>/printed for a person to look at.
      // Loaded for the demo only: the class draws with the recognizer's canvas.
      const [{ startClassroom }, { writeWorksheet }] = await Promise.all([
        import('../demo-classroom.ts'),
        import('../demo-worksheet.ts'),
      ]);
      const printed = join(config.dataDir, 'printed');
      const worksheet = join(config.dataDir, 'worksheet.pdf');
      await writeWorksheet(worksheet);
      const { createSimulatedBox } = await import('@boxhub/agent');
      box = createSimulatedBox({
        url: server.mqttUrl,
        uuid: files.box.uuid,
        secret: files.box.secret,
        scanner: 'sim:?paper=20&refill=30&ppm=60&back=text',
        printer: `sim:?side_ms=500&out=${encodeURIComponent(printed)}`,
        stateDir: join(config.dataDir, 'demo-box'),
      });
      await box.agent.start();
      const appId = files.appId;
      const templates = server.services.templates;
      stopClassroom = startClassroom({
        printer: box.printer,
        scanner: box.scanner,
        dir: printed,
        layouts: async () => {
          const { templates: list } = await templates.list(appId);
          return Promise.all(list.map(async (t) => (await templates.get(appId, t.template_id)).layout as Layout));
        },
        log: (line) => process.stderr.write(`${line}\n`),
      });
      demo = {
        ...files.demo,
        demo_file: join(config.dataDir, 'demo.json'),
        printed_dir: printed,
        sample_pdf: worksheet,
      };
    }
    if (ctx.json) {
      process.stdout.write(`${JSON.stringify({ url: server.url, mqtt_url: server.mqttUrl, demo })}\n`);
    } else if (demo) {
      const k = demo.api_key;
      process.stdout.write(
        [
          '',
          `boxhub is running at ${demo.base_url}`,
          `  API docs:      ${demo.base_url}/docs`,
          `  web console:   ${demo.base_url}/console (sign in with the demo API key)`,
          config.operatorToken
            ? `  operator:      ${demo.base_url}/console/operator (sign in with BOXHUB_OPERATOR_TOKEN)`
            : '  operator:      set BOXHUB_OPERATOR_TOKEN to turn on the operator API and /console/operator',
          `  demo API key:  ${k}`,
          `  demo box code: ${demo.device_code} (a simulated box: a scanner with 20 sheets in its feeder, a printer)`,
          `  sample PDF:    ${demo.sample_pdf} (a 3-page worksheet to print)`,
          `  printed pages: ${demo.printed_dir} (PNG of every side the demo printer prints; a printed card`,
          '                 template is filled in by a simulated class and put in the feeder)',
          `  box link:      ${server.mqttUrl}`,
          `  ${pdfEnginesLine()}`,
          `  written to:    ${demo.demo_file}`,
          '',
          'Try it (the README shows each call):',
          `  curl -s -H 'Authorization: Bearer ${k}' '${demo.base_url}/api/client/get_uuid?code=${demo.device_code}'`,
          `  npx boxhub scan --device ${demo.device_code}          # once the box is bound`,
          `  npx boxhub print ${demo.sample_pdf} --device ${demo.device_code}`,
          '',
        ].join('\n'),
      );
    } else {
      process.stdout.write(`boxhub is running at ${server.url} (box link ${server.mqttUrl})\n${pdfEnginesLine()}\n`);
    }
    const failure = await new Promise<Error | undefined>((resolve) => {
      const stop = (why?: Error) => {
        void (async () => {
          stopClassroom?.();
          await box?.agent.stop();
          await server.close();
          resolve(why);
        })();
      };
      process.once('SIGINT', () => stop());
      process.once('SIGTERM', () => stop());
      // The service can no longer run (an external broker found lacking after a reconnect).
      void server.failed.then((e) => stop(e));
    });
    if (failure) throw new Failed(`stopped: ${failure.message}`);
    return EXIT.ok;
  },
});
