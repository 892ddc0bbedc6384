// The dispatch table: one entry per command type of docs/box-protocol.md, device control and
// jobs alike (the job commands hand their task to the scan runner or the print queue).
import type { ControlCommandType, JobCommandType } from '@boxhub/protocol';
import { agentUpdate } from './agent-update.ts';
import { buzz } from './buzz.ts';
import { maintenance } from './maintenance.ts';
import { printCancel } from './print-cancel.ts';
import { printStart } from './print-start.ts';
import { reboot } from './reboot.ts';
import { scanStart } from './scan-start.ts';
import { scanStop } from './scan-stop.ts';
import type { CommandHandler } from './types.ts';

/** Job commands that are answered with an ack (`events.ack` and `reply` are one-way messages
 *  system.ts takes itself). */
type AckedJobCommand = Exclude<JobCommandType, 'events.ack' | 'reply'>;

export const commandHandlers: Record<ControlCommandType | AckedJobCommand, CommandHandler> = {
  'scan.start': scanStart,
  'scan.stop': scanStop,
  'print.start': printStart,
  'print.cancel': printCancel,
  buzz,
  reboot,
  head_clean: maintenance('head_clean'),
  power_ink_flush: maintenance('power_ink_flush'),
  nozzle_check: maintenance('nozzle_check'),
  'agent.update': agentUpdate,
};
/** The handler of a command type; undefined for a type this agent does not know (an own key only:
 *  'constructor' is not a command). */
export function handlerFor(type: string): CommandHandler | undefined {
  return isHandled(type) ? commandHandlers[type] : undefined;
}

const isHandled = (type: string): type is keyof typeof commandHandlers => Object.hasOwn(commandHandlers, type);

export type { CommandContext, CommandHandler } from './types.ts';
