// The wait between retries of a job step (uploads, downloads, direct-transfer batches): it ends
// early, without an error, when the job's signal aborts, so the caller checks the signal next.
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) { resolve(); return; }
    const t = setTimeout(() => { signal.removeEventListener('abort', done); resolve(); }, ms);
    const done = () => { clearTimeout(t); resolve(); };
    signal.addEventListener('abort', done, { once: true });
  });
}
