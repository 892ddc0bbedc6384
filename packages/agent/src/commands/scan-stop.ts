import { parseJson, ScanStopParams } from '@boxhub/protocol';
import type { CommandHandler } from './types.ts';

/** `scan.stop`: the scan stops; its end follows as an event (docs/box-protocol.md, "Jobs"). */
export const scanStop: CommandHandler = async (cmd, ctx) => {
  const p = parseJson(ScanStopParams, JSON.stringify(cmd.params));
  if (!p.ok) return { ok: false, reason: 'invalid', message: `scan.stop params ${p.error}` };
  return ctx.jobs.scans.stop(p.value);
};
