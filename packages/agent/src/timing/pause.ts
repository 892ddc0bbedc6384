// The wait between retries of a job step (uploads, downloads, direct-transfer batches) and
// between a driver's polls of a busy device: it ends early, without an error, when the signal
// aborts. It answers whether it waited the whole time (false: the signal aborted first), so the
// caller can check the signal next or stop at once.
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve(true);
    }, ms);
    const done = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal.addEventListener('abort', done, { once: true });
  });
}
