// One print job on an IPP printer, from Print-Job to its end: submit (waiting while the printer
// is busy with someone else's job), follow Get-Job-Attributes to a terminal state (RFC 8011
// §5.3.7), cancel on request (Cancel-Job, then keep following: the printer finishes the sheet
// it is on and reports the sides it printed), and turn the end into a PrintOutcome.
import { printerErrorCode } from '@boxhub/protocol/printer-errors.ts';
import { PrintRejectedError, type PrintHooks, type PrintOutcome } from '../types.ts';
import type { IppClient } from './client.ts';
import { IppStatusError, IppTransportError } from './errors.ts';
import {
  cancelJob,
  getJobAttributes,
  getJobs,
  getPrinterAttributes,
  printJob,
  type JobInfo,
  type JobRequest,
} from './operations.ts';
import { PrinterState } from './tags.ts';

/** The requesting-user-name of every job: the same on every request, so Get-Jobs, Cancel-Job
 *  and Cancel-My-Jobs find the box's jobs after a restart (docs/printers-and-scanners.md, "CUPS queues"). */
export const BOX_USER = 'boxhub';

export interface JobTiming {
  /** Get-Job-Attributes interval while a job runs. */
  pollMs: number;
  /** Longest wait between Print-Job attempts while the printer is busy. */
  busyMaxMs: number;
  /** After Cancel-Job, how long to wait for the printer to end the job before reporting it
   *  canceled with the sides seen so far. */
  cancelWaitMs: number;
  /** How long a running job may go without an answer from the printer before print() gives up
   *  with IppTransportError (the job may still print: the queue keeps its reference). */
  unreachableMs: number;
}

export const DEFAULT_JOB_TIMING: JobTiming = {
  pollMs: 500,
  busyMaxMs: 5000,
  cancelWaitMs: 60_000,
  unreachableMs: 10 * 60_000,
};

/** Statuses that mean "not now" (RFC 8011 §B.1.5): try again, the job was not created. */
const RETRY_LATER = new Set([0x0502, 0x0505, 0x0506, 0x0507]);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** The newest job of the box named `task` (job-name is the task uuid). */
export async function findJob(client: IppClient, task: string, signal?: AbortSignal): Promise<JobInfo | undefined> {
  const ro = signal ? { signal } : {};
  let jobs: JobInfo[];
  try {
    jobs = await getJobs(client, { whichJobs: 'all', ...ro });
  } catch (e) {
    // which-jobs=all is PWG 5100.7; an IPP/1.1 printer knows only the two RFC 8011 values.
    if (!(e instanceof IppStatusError)) throw e;
    jobs = [
      ...(await getJobs(client, { whichJobs: 'not-completed', ...ro })),
      ...(await getJobs(client, { whichJobs: 'completed', ...ro })),
    ];
  }
  return jobs.filter((j) => j.name === task).sort((a, b) => b.id - a.id)[0];
}

/**
 * Print-Job, answered with the job id. Busy printers (server-error-busy: ippeveprinter takes
 * one job at a time, real printers too while another client prints) are asked again with a
 * growing pause until `signal` aborts (then undefined: nothing was created). The request itself
 * is not aborted by the signal: a job the printer accepted must be known so it can be cancelled.
 * A lost answer is settled by looking for the job by its name before sending it again. Any other
 * error status is PrintRejectedError: nothing was created, nothing printed.
 */
export async function submitJob(
  client: IppClient,
  job: JobRequest & { document: Uint8Array; jobName: string },
  signal: AbortSignal,
  timing: JobTiming,
): Promise<number | undefined> {
  let pause = 250;
  let lost = 0;
  for (;;) {
    if (signal.aborted) return undefined;
    try {
      const info = await printJob(client, job, { timeoutMs: 60_000 + Math.ceil(job.document.length / 1000) });
      return info.id;
    } catch (e) {
      if (e instanceof IppStatusError && RETRY_LATER.has(e.status)) {
        await sleep(pause, signal);
        pause = Math.min(pause * 2, timing.busyMaxMs);
        continue;
      }
      // Any other IPP error status: the printer said no and created no job (RFC 8011 §4.2.1).
      if (e instanceof IppStatusError) throw new PrintRejectedError(`the printer refused the job: ${e.message}`);
      if (!(e instanceof IppTransportError) || ++lost > 3) throw e;
      const found = await findJob(client, job.jobName); // throws when the printer is still away
      if (found) return found.id;
      await sleep(pause, signal);
    }
  }
}

function outcomeOf(j: JobInfo): PrintOutcome {
  const o: PrintOutcome = { state: j.state as PrintOutcome['state'] };
  if (j.impressionsCompleted !== undefined) o.impressionsCompleted = j.impressionsCompleted;
  // The printer's words matter when it did not finish ("Out of paper"); "Job completed." not.
  const words = j.stateMessage?.trim();
  if (words && j.state !== 'completed') o.message = words.slice(0, 400);
  return o;
}

/** Why the printer aborted: its own state reasons right after (media-empty-error, ...). */
async function printerErrorNow(client: IppClient): Promise<{ code: number; reasons: string[] } | undefined> {
  try {
    const a = await getPrinterAttributes(client, { requested: ['printer-state', 'printer-state-reasons'] });
    const reasons = a.strings('printer-state-reasons');
    const state = PrinterState[a.integer('printer-state') as keyof typeof PrinterState];
    return { code: printerErrorCode(state, reasons), reasons };
  } catch {
    return undefined;
  }
}

/**
 * Follows job `id` to its end. Returns undefined when the printer does not know the job (it
 * restarted, or purged it) at the first look; later it is an aborted outcome. Aborting
 * hooks.signal sends Cancel-Job and keeps following, so the outcome carries the sides printed.
 */
export async function trackJob(
  client: IppClient,
  id: number,
  hooks: Omit<PrintHooks, 'submitted'>,
  timing: JobTiming,
): Promise<PrintOutcome | undefined> {
  let last: JobInfo | undefined;
  let reported: number | undefined;
  let cancelAt: number | undefined;
  let unreachableSince: number | undefined;
  const requested = [
    'job-id',
    'job-state',
    'job-state-reasons',
    'job-state-message',
    'job-impressions',
    'job-impressions-completed',
    'job-media-sheets-completed',
  ];
  for (;;) {
    if (hooks.signal.aborted && cancelAt === undefined) {
      cancelAt = Date.now();
      try {
        await cancelJob(client, id);
      } catch (e) {
        // client-error-not-possible: it ended meanwhile; the next look says how.
        if (!(e instanceof IppStatusError)) throw e;
      }
    }
    let j: JobInfo;
    try {
      j = await getJobAttributes(client, id, { requested });
      unreachableSince = undefined;
    } catch (e) {
      if (e instanceof IppStatusError && e.statusName === 'client-error-not-found') {
        if (!last) return undefined;
        return {
          state: 'aborted',
          ...(reported !== undefined ? { impressionsCompleted: reported } : {}),
          message: `the printer no longer knows job ${id} (it restarted?)`,
        };
      }
      if (!(e instanceof IppTransportError)) throw e;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > timing.unreachableMs)
        throw new IppTransportError(
          `the printer did not answer for ${Math.round(timing.unreachableMs / 1000)} s while job ${id} was printing: ${e.message}`,
        );
      await sleep(timing.pollMs);
      continue;
    }
    last = j;
    if (j.impressionsCompleted !== undefined && j.impressionsCompleted !== reported) {
      reported = j.impressionsCompleted;
      hooks.progress?.({ impressionsCompleted: reported });
    }
    if (j.state === 'completed' || j.state === 'canceled') return outcomeOf(j);
    if (j.state === 'aborted') {
      const o = outcomeOf(j);
      const err = await printerErrorNow(client);
      if (err && err.code !== 0) {
        o.printerError = err.code;
        o.message ??= `printer reports ${err.reasons.join(', ')}`;
      }
      o.message ??= `aborted by the printer (${j.stateReasons.join(', ') || 'no reason given'})`;
      return o;
    }
    if (cancelAt !== undefined && Date.now() - cancelAt > timing.cancelWaitMs) {
      return {
        state: 'canceled',
        ...(reported !== undefined ? { impressionsCompleted: reported } : {}),
        message: `the printer had not ended job ${id} ${Math.round(timing.cancelWaitMs / 1000)} s after Cancel-Job`,
      };
    }
    await sleep(timing.pollMs, cancelAt === undefined ? hooks.signal : undefined);
  }
}
