import { NotSupportedError, type MaintenanceOp } from '../drivers/types.ts';
import type { CommandHandler } from './types.ts';
import { messageOf } from '@boxhub/protocol/caught.ts';

/**
 * Head cleaning, heavy ink flush and the nozzle check page. Acknowledged once the printer has
 * accepted the operation (a driver returns when it is submitted; a real cleaning cycle then
 * runs for about a minute), so a refusal reaches the caller with its reason.
 */
export const maintenance =
  (op: MaintenanceOp): CommandHandler =>
  async (_cmd, ctx) => {
    const s = await ctx.printer.status();
    if (!s.connected) return { ok: false, reason: 'failed', message: 'printer is not connected' };
    if (!s.maintenance?.includes(op))
      return { ok: false, reason: 'not_supported', message: `${s.model ?? 'this printer'} does not support ${op}` };
    if (s.error_code) return { ok: false, reason: 'busy', message: `printer reports error ${s.error_code}` };
    try {
      await ctx.printer.maintenance(op);
    } catch (e) {
      if (e instanceof NotSupportedError) return { ok: false, reason: 'not_supported', message: e.message };
      return { ok: false, reason: 'failed', message: messageOf(e) };
    }
    return { ok: true };
  };
