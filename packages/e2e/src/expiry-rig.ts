// The expiry tests' rig (scan-, print- and recognition-expiry): a rig whose server runs on a
// ManualClock, so that a day passes in one line, and a callback receiver; both started before
// the file's tests and closed after them.
import { after, before } from 'node:test';
import { parseCallback, type CallbackEvent } from '@boxhub/sdk';
import { eventually } from '@boxhub/server/testing/harness.ts';
import { ManualClock } from '@boxhub/server/testing/manual-clock.ts';
import { startReceiver, type Receiver } from '@boxhub/server/testing/receiver.ts';
import { startRig, type Rig } from './fixtures.ts';

export const HOUR = 3_600_000;

export interface ExpiryRig {
  rig: Rig;
  rx: Receiver;
  clock: ManualClock;
  /** Moves the clock and waits until every job that fell due has been done. */
  advance(ms: number): Promise<void>;
  /** The callback `event` that reached the receiver at a path ending in `path`, once it has,
   *  parsed with parseCallback and not by the receiver: its signature's timestamp is the
   *  server's clock, a day ahead of this machine's, which the receiver's 5-minute window would
   *  rightly refuse. */
  callback(path: string, event: string): Promise<CallbackEvent>;
}

/** Registers the rig's before/after hooks in the calling test file; its fields are set once
 *  `before` has run (read them inside the tests). */
export function expiryRig(o: { commandTimeoutMs?: number } = {}): ExpiryRig {
  const clock = new ManualClock(Date.now());
  const x = {
    clock,
    advance: async (ms: number) => {
      await clock.advance(ms);
      await x.rig.t.server.jobRunner.quiet({ inFlight: true });
    },
    callback: async (path: string, event: string) => {
      const r = await eventually(
        () => x.rx.received.find((c) => c.path.endsWith(path) && JSON.parse(c.body).event === event),
        `${event} at ${path}`,
      );
      return parseCallback({ method: r.method, id: r.id, body: JSON.parse(r.body) });
    },
  } as ExpiryRig;
  before(async () => {
    x.rig = await startRig({
      clock,
      env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' },
      ...(o.commandTimeoutMs ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
    });
    x.rx = await startReceiver();
  });
  after(async () => {
    await x.rig.close();
    await x.rx.close();
  });
  return x;
}
