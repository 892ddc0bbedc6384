import { parseJson, ScanStartParams } from '@boxhub/protocol';
import type { CommandHandler } from './types.ts';

/** `scan.start`: taken once the task is in the journal, or refused (busy, no scanner); the scan
 *  runs after the ack (docs/box-protocol.md, "Jobs"). */
export const scanStart: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(ScanStartParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: `scan.start params ${p.error}` };
  return ctx.jobs.scans.take(p.value);
};
