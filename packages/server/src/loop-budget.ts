// Background work's share of a turn of the event loop. Node runs a turn's work to its end: a
// chain of promise resolutions, every immediate queued at the start of the check phase, every
// packet mqtt.js has read from a socket. A fleet's return makes each of those long (tens to
// hundreds of milliseconds on a loaded machine), and an API request that arrives waits for the
// turn to end (bench/README.md, "reconnect-storm", runs 50-62). The pieces of background work
// below stop after BACKGROUND_TURN_MS of a turn and go on in a later one.
import { performance } from 'node:perf_hooks';

/**
 * How long background work may run in one turn of the event loop before it lets the loop turn
 * (the requests that arrived meanwhile are read then): SQLite's connection handed from one
 * background holder to the next (fifo-sqlite-dialect.ts), and the box messages started in a turn
 * (laterTurn()).
 */
export const BACKGROUND_TURN_MS = 5;

const later: (() => void)[] = [];
let draining = false;

/**
 * Runs `fn` (which starts a piece of background work: a box message's slot handed over,
 * box-link/keyed-queue.ts) in a later turn of the event loop. The pieces waiting are started one
 * after another, each getting its first steps before the next, until the turn has spent
 * BACKGROUND_TURN_MS; the rest wait for the next turn. A `setImmediate` of each one's own ran
 * every one of them in the same turn of the loop (Node runs every immediate queued at its start,
 * one after another): 128 box messages' steps, 60-280 ms of a node on a loaded machine
 * (bench/README.md, "reconnect-storm", run 56's profile).
 */
export function laterTurn(fn: () => void): void {
  later.push(fn);
  if (!draining) {
    draining = true;
    setImmediate(drain);
  }
}

async function drain(): Promise<void> {
  const start = performance.now();
  while (later.length > 0) {
    later.shift()!();
    // The one started gets its next steps (microtasks queued before this one) before the clock
    // is read again.
    await Promise.resolve();
    if (performance.now() - start >= BACKGROUND_TURN_MS) break;
  }
  if (later.length > 0) setImmediate(drain);
  else draining = false;
}

let sliceStart = 0;
let sliceOpen = false;

/** Whether the messages read in this turn have used less than BACKGROUND_TURN_MS. */
function sliceLeft(): boolean {
  const now = performance.now();
  if (!sliceOpen) {
    sliceOpen = true;
    sliceStart = now;
    // The first immediate of the next check phase closes the slice.
    setImmediate(() => {
      sliceOpen = false;
    });
  }
  return now - sliceStart < BACKGROUND_TURN_MS;
}

/**
 * For mqtt.js's `handleMessage` (broker/external-broker.ts), which must call back before the
 * client reads its next packet: calls `next` at once, or, once the messages of this turn have
 * used BACKGROUND_TURN_MS, in a later turn. A broker's return delivers tens of thousands of
 * retained and live messages at once, and mqtt.js parsed all that one read of the socket held
 * in one turn of 0.7 s (run 61); paced, the rest waits in the socket (and a QoS 1 delivery's
 * acknowledgement with it, which paces the broker too).
 */
export function paceMessages(next: () => void): void {
  if (sliceLeft()) next();
  else setImmediate(next);
}
