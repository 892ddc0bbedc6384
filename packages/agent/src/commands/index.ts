// The dispatch table: one entry per command type of docs/box-protocol.md.
import type { ControlCommandType } from '@boxhub/protocol';
import { agentUpdate } from './agent-update.ts';
import { buzz } from './buzz.ts';
import { maintenance } from './maintenance.ts';
import { reboot } from './reboot.ts';
import type { CommandHandler } from './types.ts';

export const commandHandlers: Record<ControlCommandType, CommandHandler> = {
  buzz,
  reboot,
  head_clean: maintenance('head_clean'),
  power_ink_flush: maintenance('power_ink_flush'),
  nozzle_check: maintenance('nozzle_check'),
  'agent.update': agentUpdate,
};
export type { CommandContext, CommandHandler } from './types.ts';
