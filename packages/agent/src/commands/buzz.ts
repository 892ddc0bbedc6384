import { BuzzParams, parseJson } from '@boxhub/protocol';
import type { CommandHandler } from './types.ts';

/** Acknowledges once the pattern is accepted; the beeps then play (they may last longer than the ack timeout). */
export const buzz: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(BuzzParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: `buzz params ${p.error}` };
  ctx.later(() => ctx.buzzer.play(p.value.buzz, p.value.gap));
  return { ok: true };
};
