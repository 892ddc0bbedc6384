// BENCH_TRACE (bench/README.md, "reconnect-storm"): a line a second from a bench's child process
// to a file, for diagnosis: its CPU, its event loop's longest and median delay, and what the
// caller adds (its connections, its boxes online).
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export function traceEverySecond(file: string, fields: () => string[]): void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpu = process.cpuUsage();
  const t0 = Date.now();
  setInterval(() => {
    const c = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const line = [
      `t ${((Date.now() - t0) / 1000).toFixed(0)} s`,
      `cpu ${((c.user + c.system) / 10_000).toFixed(0)} %`,
      `loop max ${(delay.max / 1e6).toFixed(0)} ms p50 ${(delay.percentile(50) / 1e6).toFixed(0)} ms`,
      ...fields(),
    ].join('  ');
    delay.reset();
    appendFileSync(file, `${line}\n`);
  }, 1000).unref();
}
