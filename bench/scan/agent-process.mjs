// One box agent (createSimulatedBox: the real BoxAgent with the simulated scanner) in its own
// process, forked by bench/scan/first-item.bench.ts with an IPC channel, so its peak RSS is the
// box's alone. Plain JavaScript, so that it runs both on the sources (source mode, tsx) and on
// the build (dist/, as `npm start` and a box run it). It notes when its scanner hands over the
// first page of each scan (wall clock, the same machine as the bench's callback receiver).
//
// Protocol (bench/support/child.ts): { ready: true, url: '' } at start; then { id, op, ... }:
//   connect { url, uuid, secret, scanner } → once the agent is connected
//   load { sheets, images? } → the feeder emptied, then sheets in it (given JPEG files, else
//                              generated text sides)
//   firstPages → [Unix ms] the first page of each scan so far
//   rss → { rss, maxRss } bytes now and the process's high-water mark
//   close → stops the agent and exits
import { createSimulatedBox } from '@boxhub/agent';

if (!process.send) throw new Error('agent-process.mjs must be forked with an IPC channel');
const send = (m) => process.send(m);
let box;
const firstPages = [];

async function handle(req) {
  switch (req.op) {
    case 'connect': {
      const b = createSimulatedBox({
        url: String(req.url),
        uuid: String(req.uuid),
        secret: String(req.secret),
        scanner: String(req.scanner),
        keepaliveSec: 60,
      });
      box = b;
      const scan = b.scanner.scan.bind(b.scanner);
      b.scanner.scan = (r, signal) =>
        (async function* () {
          let first = true;
          for await (const p of scan(r, signal)) {
            if (first) {
              firstPages.push(Date.now());
              first = false;
            }
            yield p;
          }
        })();
      await new Promise((resolve) => {
        b.agent.link.once('connected', () => resolve());
        void b.agent.start();
      });
      return true;
    }
    case 'load': {
      const images = req.images;
      const sheet = images
        ? { front: { image: images.front }, back: { image: images.back } }
        : { front: 'text', back: 'text' };
      box.scanner.unload();
      box.scanner.load(Array.from({ length: Number(req.sheets) }, () => sheet));
      return true;
    }
    case 'firstPages':
      return firstPages;
    case 'rss':
      return { rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 };
    case 'close':
      await box?.agent.stop().catch(() => undefined);
      setImmediate(() => process.exit(0));
      return true;
    default:
      throw new Error(`unknown op '${req.op}'`);
  }
}

process.on('message', (req) => {
  handle(req).then(
    (result) => send({ id: req.id, result }),
    (e) => send({ id: req.id, error: e?.stack ?? String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ ready: true, url: '' });
