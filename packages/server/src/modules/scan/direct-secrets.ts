// A scan task's direct-transfer secret (docs/direct-transfer.md, "Signing") is returned once to
// the application, given to the box and stored sealed with the secret box (secret-box.ts). This
// is the one place that seals it and opens it again: scan create stores it, and this service's
// own receiver (modules/recognition/receiver.ts) reads it back to check the box's signatures.
// Its own small part so that scan and recognition each take it as a constructor argument
// instead of reaching each other.
import type { DirectTransfer, ScanJobOptions } from '@boxhub/protocol';
import type { TaskRow } from '../../db/schema.ts';
import type { SecretBox } from '../../secret-box.ts';

export class ScanDirectSecrets {
  private readonly box: SecretBox;
  constructor(box: SecretBox) {
    this.box = box;
  }

  /** The scan options as stored: the direct secret sealed. */
  sealed(job: ScanJobOptions): ScanJobOptions {
    return job.direct ? { ...job, direct: { ...job.direct, secret: this.box.seal(job.direct.secret) } } : job;
  }

  /** The direct-transfer options of a scan task, its secret opened; undefined when the task has
   *  no direct transfer. */
  of(task: Pick<TaskRow, 'options'>): DirectTransfer | undefined {
    const d = (JSON.parse(task.options) as ScanJobOptions).direct;
    return d ? { ...d, secret: this.box.open(d.secret) } : undefined;
  }

  /** A scan task's direct secret, opened. */
  secretOf(task: Pick<TaskRow, 'options'>): string | undefined {
    return this.of(task)?.secret;
  }
}
