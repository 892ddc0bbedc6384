// Runs one built-in PDF task (tasks.ts) on a worker thread of its own under the same limits as
// a system tool's run (limited-tool.ts): the JS heap capped at the memory limit (resourceLimits;
// past it the worker dies, not the process), every Flate stream inflated against the same cap
// before parsing (flate-guard.ts), and the clock: a worker past min(timeout, CPU seconds) is
// terminated (one thread: its CPU time is at most its wall time). docs/printing.md, "PDF engines".
import { Worker } from 'node:worker_threads';
import type { ToolLimits } from '../limited-tool.ts';
import type { BuiltinTask } from './tasks.ts';

export type BuiltinOutcome<T> =
  | { ok: true; value: T; ms: number }
  | { ok: false; reason: 'timeout' | 'aborted' | 'memory' | 'bomb' | 'failed'; message: string; ms: number };

// Built (dist/, plain node) the worker is plain JavaScript; from the TypeScript sources it starts
// through worker-boot.mjs, which registers tsx in the worker thread.
const ENTRY = import.meta.url.endsWith('.ts') ? './worker-boot.mjs' : './worker.js';

type TaskInput = BuiltinTask extends infer T ? (T extends BuiltinTask ? Omit<T, 'maxInflateBytes'> : never) : never;

export function runBuiltin<T>(task: TaskInput, limits: ToolLimits, signal?: AbortSignal): Promise<BuiltinOutcome<T>> {
  const t0 = performance.now();
  const ms = () => performance.now() - t0;
  const heapMb = Math.max(64, limits.memoryBytes >> 20);
  return new Promise((resolve) => {
    const worker = new Worker(new URL(ENTRY, import.meta.url), {
      workerData: { ...task, maxInflateBytes: limits.memoryBytes } satisfies BuiltinTask,
      resourceLimits: {
        maxOldGenerationSizeMb: heapMb,
        maxYoungGenerationSizeMb: Math.min(64, heapMb >> 2),
        stackSizeMb: 4,
      },
      stdout: true,
      stderr: true,
    });
    let settled = false;
    const finish = (r: BuiltinOutcome<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(r);
    };
    const timer = setTimeout(
      () =>
        finish({
          ok: false,
          reason: 'timeout',
          message: `took longer than ${Math.round(Math.min(limits.timeoutMs, limits.cpuSeconds * 1000) / 1000)} s`,
          ms: ms(),
        }),
      Math.min(limits.timeoutMs, limits.cpuSeconds * 1000),
    );
    const onAbort = () => finish({ ok: false, reason: 'aborted', message: 'was stopped', ms: ms() });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    worker.on('message', (m: { ok: true; value: T } | { ok: false; name: string; message: string }) => {
      if (m.ok) finish({ ok: true, value: m.value, ms: ms() });
      else if (m.name === 'InflateBombError') finish({ ok: false, reason: 'bomb', message: m.message, ms: ms() });
      // A cyclic or absurdly deep structure ends in a stack overflow inside the worker.
      else if (/Maximum call stack/.test(m.message))
        finish({
          ok: false,
          reason: 'failed',
          message: 'its structure is nested too deeply or loops (a damaged page tree?)',
          ms: ms(),
        });
      else finish({ ok: false, reason: 'failed', message: m.message.slice(0, 300), ms: ms() });
    });
    worker.on('error', (e: Error & { code?: string }) => {
      if (e.code === 'ERR_WORKER_OUT_OF_MEMORY')
        finish({ ok: false, reason: 'memory', message: `needs more than ${heapMb} MiB of memory`, ms: ms() });
      else finish({ ok: false, reason: 'failed', message: e.message.slice(0, 300), ms: ms() });
    });
    worker.on('exit', (code) =>
      finish({ ok: false, reason: 'failed', message: `the PDF worker stopped (exit ${code})`, ms: ms() }),
    );
  });
}
