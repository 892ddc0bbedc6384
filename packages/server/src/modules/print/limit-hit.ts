// The server's print check runs qpdf under memory and time limits through the runner the box
// uses too (@boxhub/pdf-tools limited-tool.ts); here, the words for a run a limit stopped, as the
// application reads them in a refusal.
import type { ToolLimits, ToolResult } from '@boxhub/pdf-tools/limited-tool.ts';

/** Why a run was stopped by a limit, or undefined when it ended on its own. */
export function limitHit(r: ToolResult, l: ToolLimits): string | undefined {
  if (r.killed === 'timeout') return `reading it took longer than ${l.timeoutMs / 1000} s`;
  if (r.killed === 'output') return `its structure is larger than ${l.maxOutputBytes >> 20} MiB`;
  if (r.killed === 'aborted') return 'the check was stopped';
  if (r.signal === 'SIGXCPU') return `reading it took more than ${l.cpuSeconds} s of CPU`;
  // Under --as a failed allocation ends in std::bad_alloc: reported as a warning when qpdf
  // survives it (one stream skipped), or it dies of a signal.
  if (r.signal || /std::bad_alloc/.test(r.stderr))
    return `it needs more than ${l.memoryBytes >> 20} MiB of memory to read (a compression bomb?)`;
  return undefined;
}
