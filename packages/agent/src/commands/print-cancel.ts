import { parseJson, PrintCancelParams } from '@boxhub/protocol';
import type { CommandHandler } from './types.ts';

/** `print.cancel`: the listed tasks, or with `all` every one the box holds, end cancelled
 *  (docs/box-protocol.md, "Jobs"). */
export const printCancel: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(PrintCancelParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: `print.cancel params ${p.error}` };
  return ctx.jobs.prints.cancel(p.value);
};
