import type { CommandHandler } from './types.ts';

/** Acknowledges first, then reboots: the server must hear the ack before the link drops. */
export const reboot: CommandHandler = async (_cmd, ctx) => {
  ctx.later(() => ctx.reboot());
  return { ok: true };
};
