// The box's document tools (qpdf, pdftoppm) run under memory and time limits through the
// runner the server uses too (@boxhub/pdf-tools limited-tool.ts); here, the box's default limits
// and the words for a failed run in a task's message.
import { runLimited as run, type ToolLimits, type ToolResult } from '@boxhub/pdf-tools/limited-tool.ts';

export type { ToolLimits, ToolResult };

export const DEFAULT_TOOL_LIMITS: ToolLimits = {
  memoryBytes: 512 << 20,
  cpuSeconds: 60,
  timeoutMs: 120_000,
  maxOutputBytes: 64 << 20,
};

/** Why a run failed, in words for a task's message. */
export function describeFailure(tool: string, r: ToolResult, limits: ToolLimits): string {
  if (r.killed === 'timeout') return `${tool} took longer than ${Math.round(limits.timeoutMs / 1000)} s`;
  if (r.killed === 'output') return `${tool} output more than ${limits.maxOutputBytes >> 20} MiB`;
  if (r.killed === 'aborted') return `${tool} was stopped`;
  // SIGXCPU: the CPU limit; SIGKILL/SIGSEGV/SIGABRT without our kill: memory exhausted (a
  // failed allocation under --as ends in std::bad_alloc → abort, or the OOM path).
  if (r.signal === 'SIGXCPU') return `${tool} used more than ${limits.cpuSeconds} s of CPU`;
  if (r.signal) return `${tool} needed more than ${limits.memoryBytes >> 20} MiB of memory (${r.signal})`;
  if (/bad_alloc|out of memory|cannot allocate/i.test(r.stderr))
    return `${tool} needed more than ${limits.memoryBytes >> 20} MiB of memory`;
  const first = r.stderr.split('\n').find((l) => l.trim()) ?? '';
  return `${tool} failed (exit ${r.code}): ${first.slice(0, 300)}`;
}

/** The shared runner with the box's default limits. */
export function runLimited(
  cmd: string,
  args: readonly string[],
  limits: ToolLimits = DEFAULT_TOOL_LIMITS,
  signal?: AbortSignal,
): Promise<ToolResult> {
  return run(cmd, args, limits, signal);
}
