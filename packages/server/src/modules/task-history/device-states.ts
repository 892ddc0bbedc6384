// The device's state while a task uses it, in the task's history (docs/tasks.md, "History"):
// each change of the printer's state (state, normalised reasons, error code) while a print task
// is printing, and of the scanner's while a scan task runs, as the printer or scanner said it
// in the box's state reports.
import type { BoxState } from '@boxhub/protocol';
import type { Logger } from 'pino';
import type { TaskRepository } from '../../tasks/repository.ts';
import { printerSide, scannerSide, serialise } from '../device-events/snapshot.ts';

export function deviceStateRecorder(tasks: TaskRepository, log: Logger) {
  return async (device: string, state: BoxState, at: number): Promise<void> => {
    try {
      const active = await tasks.active(tasks.db, device);
      for (const t of active) {
        // Printing: the printer accepted the job. Scanning: the box took the task.
        const what = t.kind === 'print' && t.state === 'started' ? 'printer_state' : t.kind === 'scan' && t.state === 'received' ? 'scanner_state' : undefined;
        if (!what) continue;
        const side = what === 'printer_state' ? { ...printerSide(state.printer), device_reasons: (state.printer.state_reasons ?? []).filter((r) => r !== 'none') } : { ...scannerSide(state.scanner), device_reasons: state.scanner.state_reasons ?? [] };
        const last = await tasks.history.last(tasks.db, t.uuid, what);
        if (last && serialise(last.detail) === serialise(side)) continue;
        await tasks.history.add(tasks.db, t.uuid, { at, source: what === 'printer_state' ? 'printer' : 'scanner', what, detail: side });
      }
    } catch (err) {
      log.warn({ err, device }, 'device state not recorded in task history');
    }
  };
}
