import { parseJson, PrintStartParams } from '@boxhub/protocol';
import type { CommandHandler } from './types.ts';

/** `print.start`: taken once the task is in the journal and queued, or refused (no printer, a
 *  task cancelled already); it prints in its turn (docs/printing.md, "On the box"). */
export const printStart: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(PrintStartParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: `print.start params ${p.error}` };
  return ctx.jobs.prints.take(p.value);
};
