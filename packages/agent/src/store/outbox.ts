// The box's durable outbox of job events (docs/box-protocol.md, "Jobs"). An event is on disk
// before append() returns and stays there until the server acknowledges it (events.ack), which
// the server does only after applying it in its database; so an event outlives any outage, a
// reboot or a server restart, and reaches the server at least once. Each event carries its
// task's next sequence number; the server applies a task's events once each, in order.
//
// Sending: one event in flight per task (the next goes when the previous is acknowledged), so
// behind a shared subscription two server nodes never see a task's events out of order. All
// unacknowledged events go again after every reconnect and every `resendMs` while connected
// (an acknowledgement can be lost too).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { JobEvent, JobEventDataOf, JobEventType } from '@boxhub/protocol';
import { ensureDir, readJsonDir, removeFile, writeFileAtomic } from './atomic-file.ts';

interface Stored {
  file: string;
  event: JobEvent;
  sentAt: number;
}

export interface OutboxOptions {
  dir: string;
  /** Publishes one event; rejects when it cannot (not connected). */
  publish: (e: JobEvent) => Promise<void>;
  now?: () => number;
  resendMs?: number;
}

export class Outbox {
  private readonly o: Required<OutboxOptions>;
  /** Unacknowledged events, in append order. */
  private readonly queue: Stored[] = [];
  /** Last sequence number used per task (kept on disk in seqs.json). */
  private seqs = new Map<string, number>();
  /** seqs.json is behind the events on disk (its write failed: a full disk). */
  private seqsBehind = false;
  /** Files of acknowledged events kept until seqs.json is written again: load() takes a task's
   *  seq from them, so a restart never numbers a new event with a seq the server has seen. */
  private readonly acknowledgedFiles: string[] = [];
  private counter = 0;
  private timer: NodeJS.Timeout | undefined;
  private connected = false;
  private readonly listeners = new Set<(ids: string[]) => void>();

  constructor(o: OutboxOptions) {
    this.o = { now: Date.now, resendMs: 30_000, ...o };
    ensureDir(o.dir);
  }

  /** Loads what an earlier run left: unacknowledged events and the sequence numbers used. */
  async load(): Promise<void> {
    const seqFile = (await readJsonDir<Record<string, number>>(this.o.dir)).find((f) => f.name === 'seqs.json');
    this.seqs = new Map(Object.entries(seqFile?.value ?? {}));
    for (const f of await readJsonDir<JobEvent>(this.o.dir)) {
      if (f.name === 'seqs.json') continue;
      this.queue.push({ file: f.name, event: f.value, sentAt: 0 });
      // An event written just before a crash, whose seqs.json update did not happen.
      this.seqs.set(f.value.task, Math.max(this.seqs.get(f.value.task) ?? 0, f.value.seq));
      this.counter = Math.max(this.counter, Number(f.name.split('-')[0]) || 0);
    }
  }

  /** Records an event durably, then sends it when its turn comes. */
  async append<T extends JobEventType>(task: string, type: T, data: JobEventDataOf<T>): Promise<JobEvent> {
    // A stopped agent records nothing: its job resumes from the journal at the next start.
    if (this.closed) throw new Error('the outbox is closed (the agent is stopping)');
    const seq = (this.seqs.get(task) ?? 0) + 1;
    const event: JobEvent = {
      v: 1,
      id: randomUUID(),
      task,
      seq,
      at: this.o.now(),
      type,
      data: data as Record<string, unknown>,
    };
    const file = `${String(++this.counter).padStart(12, '0')}-${event.id}.json`;
    await writeFileAtomic(join(this.o.dir, file), JSON.stringify(event));
    // The event is on disk: it is recorded, and it goes to the server whatever happens to
    // seqs.json next. Failing here instead (seqs.json not written on a full disk) left the
    // event unsent while the caller's retry numbered the next one past it, which the server
    // never applies (out of order): the task waited until it expired.
    this.seqs.set(task, seq);
    this.queue.push({ file, event, sentAt: 0 });
    this.flush();
    await this.saveSeqs().catch(() => undefined);
    return event;
  }

  /** The server applied these: forget them, and send each task's next. */
  async ack(ids: readonly string[]): Promise<void> {
    if (this.closed) return;
    const set = new Set(ids);
    // Taken out of the queue before any await: acknowledgements can arrive while files of an
    // earlier one are still being removed.
    const gone = this.queue.filter((s) => set.has(s.event.id));
    if (gone.length === 0) return;
    for (const g of gone) this.queue.splice(this.queue.indexOf(g), 1);
    this.acknowledgedFiles.push(...gone.map((g) => g.file));
    await this.removeAcknowledged();
    const done = gone.map((g) => g.event.id);
    for (const l of this.listeners) l(done);
    this.flush();
  }

  /** Called with the ids of acknowledged events. */
  onAcked(listener: (ids: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events of a task not yet acknowledged. */
  pendingFor(task: string): number {
    return this.queue.filter((s) => s.event.task === task).length;
  }

  get size(): number {
    return this.queue.length;
  }

  /** A task whose events are all acknowledged and that will send no more: its seq is dropped. */
  async forget(task: string): Promise<void> {
    if (this.closed || this.pendingFor(task) > 0 || !this.seqs.delete(task)) return;
    await this.saveSeqs();
  }

  setConnected(connected: boolean): void {
    this.connected = connected;
    if (connected) {
      for (const s of this.queue) s.sentAt = 0;
      this.flush();
      if (!this.timer) {
        this.timer = setInterval(() => this.resendStale(), Math.min(this.o.resendMs, 5000));
        this.timer.unref();
      }
    } else if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private closed = false;

  /** The agent stops: nothing more is sent or forgotten (the next start takes up the rest). */
  close(): void {
    this.closed = true;
    this.connected = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private resendStale(): void {
    const now = this.o.now();
    for (const s of this.queue) if (s.sentAt !== 0 && now - s.sentAt >= this.o.resendMs) s.sentAt = 0;
    this.flush();
  }

  /** Sends the first unacknowledged event of every task that has none in flight. */
  private flush(): void {
    if (!this.connected) return;
    const seen = new Set<string>();
    for (const s of this.queue) {
      if (seen.has(s.event.task)) continue;
      seen.add(s.event.task);
      if (s.sentAt !== 0) continue;
      s.sentAt = this.o.now();
      this.o.publish(s.event).catch(() => {
        s.sentAt = 0;
      });
    }
  }

  private async saveSeqs(): Promise<void> {
    this.seqsBehind = true;
    await writeFileAtomic(join(this.o.dir, 'seqs.json'), JSON.stringify(Object.fromEntries(this.seqs)));
    this.seqsBehind = false;
  }

  /** Deletes the files of acknowledged events, once seqs.json holds their seqs. A file left
   *  (seqs.json cannot be written yet) is loaded again after a restart and sent again: the
   *  server answers a repeat as a duplicate, and it goes then. */
  private async removeAcknowledged(): Promise<void> {
    if (
      this.seqsBehind &&
      !(await this.saveSeqs().then(
        () => true,
        () => false,
      ))
    )
      return;
    for (const file of this.acknowledgedFiles.splice(0)) await removeFile(join(this.o.dir, file));
  }
}
