// Timing helpers for the driver tests. Wall-clock upper bounds on real processes and sockets
// fail on a loaded machine, so tests bound time only where two outcomes are orders of magnitude
// apart (a refused connection in milliseconds against a timeout of a minute), with this guard.

/** Resolves with the promise's value, or rejects when `guardMs` passes first (a hang). */
export function beforeHang<T>(p: Promise<T>, guardMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${guardMs} ms`)), guardMs);
  });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

/**
 * A port nothing can listen on: connecting to port 0 is refused by the kernel at once, unlike
 * a "free" port found by binding and releasing, which another process may take in between.
 */
export const CLOSED_PORT = 0;
