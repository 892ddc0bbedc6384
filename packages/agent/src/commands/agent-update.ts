import { parseJson } from '@boxhub/protocol';
import { AgentUpdateParams } from '@boxhub/protocol/release.ts';
import type { CommandHandler } from './types.ts';

/** `agent.update`: answered once the release's manifest is checked; the install follows the ack
 *  (docs/updates.md, "What a box does"). */
export const agentUpdate: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(AgentUpdateParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: p.error };
  if (!ctx.updater)
    return { ok: false, reason: 'not_supported', message: 'this agent runs without a state directory for releases' };
  const updater = ctx.updater;
  const v = await updater.accept(p.value);
  if (!v.ok) return { ok: false, reason: 'invalid', message: v.reason };
  ctx.later(() => updater.run(p.value));
  return { ok: true };
};
