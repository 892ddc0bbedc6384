// The box's journal of the jobs it holds (docs/box-protocol.md, "Jobs"): one file per task,
// written atomically whenever the job's progress changes, so after a reboot the agent knows
// every task it accepted, what it had done of each (a scan's items, whether a print was handed
// to the printer) and what is left. A job leaves the journal only once the server has
// acknowledged its final event.
import { join } from 'node:path';
import type { BoxJobState } from '@boxhub/protocol';
import { ensureDir, readJsonDir, removeFile, writeFileAtomic } from './atomic-file.ts';

export interface JournalEntry<D = unknown> {
  task: string;
  kind: BoxJobState['kind'];
  state: BoxJobState['state'];
  /** Agent boot that accepted it. */
  boot: string;
  acceptedAt: number;
  /** The job's own record: its parameters and progress. */
  data: D;
}

export class Journal {
  private readonly dir: string;
  private readonly entries = new Map<string, JournalEntry>();

  constructor(dir: string) {
    this.dir = dir;
    ensureDir(dir);
  }

  async load(): Promise<JournalEntry[]> {
    for (const f of await readJsonDir<JournalEntry>(this.dir)) this.entries.set(f.value.task, f.value);
    return this.all();
  }

  all(): JournalEntry[] {
    return [...this.entries.values()].sort((a, b) => a.acceptedAt - b.acceptedAt);
  }

  get<D>(task: string): JournalEntry<D> | undefined {
    return this.entries.get(task) as JournalEntry<D> | undefined;
  }

  async put<D>(e: JournalEntry<D>): Promise<void> {
    await writeFileAtomic(this.file(e.task), JSON.stringify(e));
    this.entries.set(e.task, e);
  }

  async remove(task: string): Promise<void> {
    await removeFile(this.file(task));
    this.entries.delete(task);
  }

  /** What BoxState.jobs reports. */
  states(): BoxJobState[] {
    return this.all().map((e) => ({ task: e.task, kind: e.kind, state: e.state }));
  }

  private file(task: string): string {
    if (!/^[A-Za-z0-9-]{1,64}$/.test(task)) throw new Error(`bad task id '${task}'`);
    return join(this.dir, `${task}.json`);
  }
}
