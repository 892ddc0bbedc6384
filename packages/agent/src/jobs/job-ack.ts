// What a job command answers (docs/box-protocol.md, "Jobs"): taken, or refused with a reason the
// server maps to its error (busy, invalid, not supported, failed). Its own file: the runner and
// the print queue both answer with it, and neither imports the other for it.
import type { AckReason } from '@boxhub/protocol';

export interface JobAck {
  ok: boolean;
  reason?: AckReason;
  message?: string;
  data?: Record<string, unknown>;
}
