// Server memory under oversized MQTT publishes (docs/configuration.md, "Box link"): six logged-in boxes
// each publish one 100 MB message to the embedded broker. Two servers side by side in one run:
// one with the default BOXHUB_MQTT_MAX_PACKET_BYTES (270,000: the connection is closed when
// the header announces 100 MB), and one with the limit raised to 256 MiB, which lets aedes
// read each packet whole as it did before the limit existed (the 256 KiB message check then
// refuses it only after it was buffered). Figures: each server's RSS before, its high-water
// mark (maxRSS) after, and the growth.
//
// Env: BENCH_OVERSIZE_BOXES (6), BENCH_OVERSIZE_MB (100).
import mqtt from 'mqtt';
import { forkChild, header, tempDir, verdict, type Child } from './support/child.ts';

const BOXES = Number(process.env.BENCH_OVERSIZE_BOXES ?? 6);
const MB = Number(process.env.BENCH_OVERSIZE_MB ?? 100);
const mib = (b: number) => (b / 2 ** 20).toFixed(0);

async function run(
  label: string,
  maxPacket: string | undefined,
  payload: Buffer,
): Promise<{ before: number; peak: number; refused: number }> {
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    BOXHUB_MQTT_PORT: '0',
    BOXHUB_MQTT_HOST: '127.0.0.1',
    BOXHUB_DATA_DIR: tempDir(),
    LOG_LEVEL: 'warn',
  };
  if (maxPacket) env.BOXHUB_MQTT_MAX_PACKET_BYTES = maxPacket;
  const server: Child = await forkChild('server-process.ts', ['boxhub'], { env });
  try {
    const devs = await server.call<{ uuid: string; secret: string }[]>('register', { n: BOXES });
    const before = (await server.call<{ rss: number }>('rss')).rss;
    let refused = 0;
    await Promise.all(
      devs.map(async (d) => {
        const c = await mqtt.connectAsync(server.ready.mqttUrl!, {
          clientId: d.uuid,
          username: d.uuid,
          password: d.secret,
          protocolVersion: 4,
          reconnectPeriod: 0,
        });
        // QoS 0: done when written or when the broker closed the connection.
        await new Promise<void>((resolve) => {
          c.once('close', () => {
            refused++;
            resolve();
          });
          c.publish(`box/${d.uuid}/event`, payload, { qos: 0 }, () => undefined);
        });
        c.end(true);
      }),
    );
    const after = await server.call<{ rss: number; maxRss: number }>('rss');
    console.log(
      `  ${label.padEnd(44)} RSS before ${mib(before)} MiB, peak ${mib(after.maxRss)} MiB (+${mib(after.maxRss - before)} MiB), connections closed by the broker ${refused}/${BOXES}`,
    );
    return { before, peak: after.maxRss, refused };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  header(`embedded broker memory: ${BOXES} logged-in boxes each publish one ${MB} MB message`, [
    'two servers in turn, each in its own process (SQLite, aedes in-process); the boxes are mqtt.js clients in this process',
    'RSS high-water mark from process.resourceUsage().maxRSS in the server',
  ]);
  const payload = Buffer.alloc(MB * 1_000_000, 0x61);
  const limited = await run('default limit (270,000 bytes)', undefined, payload);
  const open = await run('limit raised to 256 MiB (reads them whole)', String(256 * 1024 * 1024), payload);
  const growth = limited.peak - limited.before;
  console.log(`  growth with the limit: ${mib(growth)} MiB; without: ${mib(open.peak - open.before)} MiB`);
  console.log(
    `  ${verdict(growth < 50 * 2 ** 20 && limited.refused === BOXES)}: with the limit each oversized publish is refused before its payload is read (growth < 50 MiB)`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
