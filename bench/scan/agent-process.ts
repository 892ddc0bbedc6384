// One box agent (createSimulatedBox: the real BoxAgent with the simulated scanner) in its own
// process, forked by bench/scan/first-item.bench.ts with an IPC channel, so its peak RSS is the
// box's alone. It notes when its scanner hands over the first page of each scan (wall clock,
// the same machine as the bench's callback receiver).
//
// Protocol (bench/support/child.ts): { ready: true, url: '' } at start; then { id, op, ... }:
//   connect { url, uuid, secret, scanner } → once the agent is connected
//   load { sheets, images? } → sheets in the feeder (given JPEG files, else generated text sides)
//   firstPages → [Unix ms] the first page of each scan so far
//   rss → { rss, maxRss } bytes now and the process's high-water mark
//   close → stops the agent and exits
import type { ScannedPage, ScanRequest } from '../../packages/agent/src/drivers/types.ts';
import { createSimulatedBox, type SimulatedBox } from '@boxhub/agent';

type Request = { id: number; op: string; [k: string]: unknown };
if (!process.send) throw new Error('agent-process.ts must be forked with an IPC channel');
const send = (m: unknown) => process.send!(m);
let box: SimulatedBox | undefined;
const firstPages: number[] = [];

async function handle(req: Request): Promise<unknown> {
  switch (req.op) {
    case 'connect': {
      const b = createSimulatedBox({ url: String(req.url), uuid: String(req.uuid), secret: String(req.secret), scanner: String(req.scanner), keepaliveSec: 60 });
      box = b;
      const scan = b.scanner.scan.bind(b.scanner);
      b.scanner.scan = (r: ScanRequest, signal: AbortSignal) => (async function* (): AsyncGenerator<ScannedPage> {
        let first = true;
        for await (const p of scan(r, signal)) {
          if (first) { firstPages.push(Date.now()); first = false; }
          yield p;
        }
      })();
      await new Promise<void>((resolve) => { b.agent.link.once('connected', () => resolve()); void b.agent.start(); });
      return true;
    }
    case 'load': {
      const images = req.images as { front: string; back: string } | undefined;
      const sheet = images ? { front: { image: images.front }, back: { image: images.back } } : { front: 'text' as const, back: 'text' as const };
      box!.scanner.load(Array.from({ length: Number(req.sheets) }, () => sheet));
      return true;
    }
    case 'firstPages': return firstPages;
    case 'rss': return { rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 };
    case 'close':
      await box?.agent.stop().catch(() => undefined);
      setImmediate(() => process.exit(0));
      return true;
    default: throw new Error(`unknown op '${req.op}'`);
  }
}

process.on('message', (raw) => {
  const req = raw as Request;
  handle(req).then((result) => send({ id: req.id, result }), (e: unknown) => send({ id: req.id, error: (e as Error).stack ?? String(e) }));
});
process.on('disconnect', () => process.exit(0));
send({ ready: true, url: '' });
