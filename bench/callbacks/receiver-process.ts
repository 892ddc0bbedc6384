// A loopback callback receiver in its own process (so it does not share the server's CPU time
// slice). Answers 200 on /ok and 500 elsewhere; on the IPC message 'dump' it sends back what it
// received (path, id, arrival and answer times in Unix ms) and forgets it.
import { startReceiver } from '../../packages/server/src/testing/receiver.ts';

const rx = await startReceiver();
rx.decide((r) => (r.path.startsWith('/ok') ? 200 : 500));
process.on('message', (m: unknown) => {
  if (m === 'dump') {
    const out = rx.received.map((r) => ({ path: r.path, id: r.id, at: r.at, answeredAt: r.answeredAt ?? 0 }));
    rx.received.length = 0;
    process.send!({ dump: out });
  } else if (m === 'count') process.send!({ count: rx.received.length });
  else if (m === 'close') void rx.close().then(() => process.exit(0));
});
process.send!({ url: new URL(rx.url).origin });
