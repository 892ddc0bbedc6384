// The device's state while a task uses it, in the task's history (docs/tasks.md, "History"):
// each change of the printer's state (state, normalised reasons, error code) while a print task
// is printing, and of the scanner's while a scan task runs, as the printer or scanner said it
// in the box's state reports. The box reports a fault that ends a job and the job's end on two
// paths, in either order, so a task ended less than END_GRACE_MS ago still takes the state that
// ended it.
import type { BoxState } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { TaskRow } from '../../db/schema.ts';
import { groupBy, TurnBatch } from '../../db/turn-batch.ts';
import type { TaskRepository } from '../../tasks/repository.ts';
import { printerSide, scannerSide, serialise } from '../device-events/snapshot.ts';

export const END_GRACE_MS = 10_000;

export function deviceStateRecorder(tasks: TaskRepository, clock: Clock, log: Logger) {
  // The print and scan tasks of every box that reported in one turn, read with one statement: a
  // node's return brings a state report from every box within seconds (bench/README.md,
  // "reconnect-storm").
  type Active = Pick<TaskRow, 'device_uuid' | 'uuid' | 'kind' | 'state' | 'started_at' | 'acked_at'>;
  const tasksOf = new TurnBatch<string, Active[]>(async (devices) => {
    const since = clock.now() - END_GRACE_MS;
    const rows = await tasks.db
      .selectFrom('tasks')
      .select(['device_uuid', 'uuid', 'kind', 'state', 'started_at', 'acked_at'])
      .where('device_uuid', 'in', devices)
      .where('kind', 'in', ['print', 'scan'])
      .where((eb) => eb.or([eb('state', '!=', 'ended'), eb('finished_at', '>=', since)]))
      .execute();
    return groupBy(devices, rows, (r) => r.device_uuid);
  });
  return async (device: string, state: BoxState, at: number): Promise<void> => {
    try {
      const rows = await tasksOf.add(device);
      for (const t of rows) {
        // Printing: the printer accepted the job. Scanning: the box took the task.
        const what =
          t.kind === 'print' && t.started_at !== null
            ? 'printer_state'
            : t.kind === 'scan' && t.acked_at !== null
              ? 'scanner_state'
              : undefined;
        if (!what) continue;
        const side =
          what === 'printer_state'
            ? {
                ...printerSide(state.printer),
                device_reasons: (state.printer.state_reasons ?? []).filter((r) => r !== 'none'),
              }
            : { ...scannerSide(state.scanner), device_reasons: state.scanner.state_reasons ?? [] };
        const last = await tasks.history.last(tasks.db, t.uuid, what);
        if (last && serialise(last.detail) === serialise(side)) continue;
        // An ended task takes only a state that explains its end (a fault), not the idle after it.
        if (t.state === 'ended' && side.state_reasons.length === 0) continue;
        await tasks.history.add(tasks.db, t.uuid, {
          at,
          source: what === 'printer_state' ? 'printer' : 'scanner',
          what,
          detail: side,
        });
      }
    } catch (err) {
      log.warn({ err, device }, 'device state not recorded in task history');
    }
  };
}
