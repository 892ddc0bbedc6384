// The agent: owns the link, the printer and scanner drivers, the buzzer, and the command
// dispatch. Reports its full state on connect and whenever it changes (drivers that can push
// changes do; the others are polled).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  type Ack,
  BOX_PROTOCOL_VERSION,
  type BoxState,
  Command,
  EventsAckParams,
  messageOf,
  parseJson,
  type PrinterCapability,
  type PrinterStatus,
  ReplyParams,
  topics,
} from '@boxhub/protocol';
import { type CommandContext, handlerFor } from './commands/index.ts';
import type { PrinterDriver, ScannerDriver } from './drivers/types.ts';
import type { Buzzer } from './host/buzzer.ts';
import type { NetworkInfo } from './host/network.ts';
import { BoxJobs, type BoxJobsDeps } from './jobs/box-jobs.ts';
import { BoxLink, type LinkOptions } from './link/connection.ts';
import { BoxRequests } from './link/requests.ts';
import { Journal } from './store/journal.ts';
import { Outbox } from './store/outbox.ts';
import { loadBoxKey } from './store/box-key.ts';
import type { E2eKeyPair } from '@boxhub/protocol/e2e.ts';
import { Updater } from './update/updater.ts';

export interface BoxIdentity {
  model: string;
  version: string;
  firmware: string;
}

export interface AgentOptions {
  link: LinkOptions;
  printer: PrinterDriver;
  scanner: ScannerDriver;
  buzzer: Buzzer;
  identity: BoxIdentity;
  network: () => Promise<NetworkInfo>;
  /** What a reboot does: the real box restarts; the simulator reconnects. */
  reboot: (agent: BoxAgent) => Promise<void>;
  statusIntervalMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
  /** Where the box keeps its job journal, its outbox of events and its scan items (owner-only). */
  stateDir: string;
  /** Retry delays of item uploads (tests shorten them). */
  uploadBackoff?: { baseMs: number; maxMs: number };
  /** Scan item caps (ITEM_LIMITS by default; tests make items small). */
  itemLimits?: BoxJobsDeps['itemLimits'];
  /** Direct transfer's retry policy (docs/direct-transfer.md) and extra trusted CAs (tests shorten and add them). */
  direct?: BoxJobsDeps['direct'];
  /** How long an unacknowledged event waits before it is sent again while connected (30 s). */
  outboxResendMs?: number;
  /** Agent updates (docs/updates.md): the release public key (PEM) and what a switch does
   *  (stop and exit for the launcher). Without `restart` the box takes no updates. */
  update?: { publicKey: string | undefined; restart: () => void; busyPollMs?: number };
}

export class BoxAgent {
  readonly link: BoxLink;
  private readonly o: AgentOptions;
  private lastState = '';
  private poll: NodeJS.Timeout | undefined;
  private active = false;
  private readonly unwatch: (() => void)[] = [];
  private readonly seen: string[] = [];
  private readonly acks = new Map<string, Ack>();
  private publishing: Promise<void> = Promise.resolve();
  /** Random per start: the server tells a task this box lost in a restart by it. */
  readonly boot = randomUUID();
  readonly journal: Journal;
  readonly outbox: Outbox;
  readonly requests: BoxRequests;
  readonly jobs: BoxJobs;
  /** The box's key pair for encrypted print files, loaded (or made) at start. */
  private e2eKey: E2eKeyPair | undefined;
  readonly updater: Updater | undefined;

  constructor(o: AgentOptions) {
    this.o = o;
    this.link = new BoxLink(o.link);
    this.journal = new Journal(join(o.stateDir, 'jobs'));
    this.outbox = new Outbox({
      dir: join(o.stateDir, 'outbox'),
      publish: (e) => this.link.publish(topics.event(o.link.uuid), JSON.stringify(e), { qos: 1 }),
      ...(o.outboxResendMs ? { resendMs: o.outboxResendMs } : {}),
    });
    this.requests = new BoxRequests(this.link, o.link.uuid);
    const log = (msg: string, extra?: Record<string, unknown>) => this.log(msg, extra);
    this.jobs = new BoxJobs({
      boot: this.boot,
      stateDir: o.stateDir,
      journal: this.journal,
      outbox: this.outbox,
      requests: this.requests,
      scanner: o.scanner,
      printer: o.printer,
      log,
      changed: () => void this.reportState(),
      deviceUuid: o.link.uuid,
      boxKey: () => this.e2eKey,
      ...(o.uploadBackoff ? { uploadBackoff: o.uploadBackoff } : {}),
      ...(o.itemLimits ? { itemLimits: o.itemLimits } : {}),
      boxUuid: o.link.uuid,
      userAgent: `boxhub-box/${o.identity.version}`,
      ...(o.direct ? { direct: o.direct } : {}),
    });
    this.updater = o.update
      ? new Updater({
          stateDir: o.stateDir,
          publicKey: o.update.publicKey,
          version: o.identity.version,
          restart: o.update.restart,
          busy: () => this.jobs.states().length > 0,
          changed: () => void this.reportState(),
          log,
          ...(o.update.busyPollMs ? { busyPollMs: o.update.busyPollMs } : {}),
        })
      : undefined;
    this.link.on('connected', () => {
      this.lastState = '';
      // State first (it lists the jobs this box holds), then the events it still owes. A
      // release on trial is healthy once its state is out (docs/updates.md).
      void this.reportState()
        .then(async () => {
          this.outbox.setConnected(true);
          if (this.lastState && this.updater) await this.updater.healthy();
        })
        .catch((e: unknown) => this.log('update trial not ended', { error: messageOf(e) }));
    });
    this.link.on('disconnected', () => this.outbox.setConnected(false));
    this.link.on('message', (topic, payload) => {
      if (topic !== topics.cmd(o.link.uuid)) return;
      // A command's failure is answered in its ack; what fails around it (an acknowledgement's
      // files, the disk) is logged, never left to end the process.
      this.onCommand(payload).catch((e: unknown) => this.log('command not handled', { error: messageOf(e) }));
    });
    this.link.on('error', (err) => this.log('link error', { error: err.message }));
    this.link.on('busy', (reason) => this.log('the node cannot take this box yet; backing off', { reason }));
  }

  get uuid(): string {
    return this.o.link.uuid;
  }
  get stateDir(): string {
    return this.o.stateDir;
  }
  get printer(): PrinterDriver {
    return this.o.printer;
  }
  get scanner(): ScannerDriver {
    return this.o.scanner;
  }

  /** Loads the journal and the outbox an earlier run left, resumes their jobs, then connects. */
  async start(): Promise<void> {
    this.active = true;
    this.e2eKey = await loadBoxKey(this.o.stateDir);
    await this.updater?.load();
    await this.journal.load();
    await this.outbox.load();
    await this.jobs.resume();
    this.link.start();
    for (const d of [this.o.printer, this.o.scanner]) {
      const off = d.watch?.(() => void this.reportState());
      if (off) this.unwatch.push(off);
    }
    this.poll = setInterval(() => void this.reportState(), this.o.statusIntervalMs ?? 10_000);
    this.poll.unref?.();
  }

  /** Between start() and stop(): a reboot that ends after a stop must not connect again. */
  get running(): boolean {
    return this.active;
  }

  async stop(): Promise<void> {
    this.active = false;
    if (this.poll) clearInterval(this.poll);
    for (const off of this.unwatch.splice(0)) off();
    await this.jobs.close();
    this.outbox.close();
    this.requests.close();
    await this.link.stop();
  }

  /** Publishes the box state if it changed since the last report (or after a reconnect). */
  reportState(): Promise<void> {
    // Serialised: two overlapping reports must not publish out of order.
    this.publishing = this.publishing
      .then(() => this.doReport())
      .catch((e: unknown) => this.log('state report failed', { error: messageOf(e) }));
    return this.publishing;
  }

  private async doReport(): Promise<void> {
    if (!this.link.connected) return;
    const [status, scanner, net] = await Promise.all([
      this.o.printer.status(),
      this.o.scanner.status(),
      this.o.network(),
    ]);
    const printer = { ...status, ...(await this.capability(status)) };
    const body = {
      ...net,
      model: this.o.identity.model,
      version: this.o.identity.version,
      firmware: this.o.identity.firmware,
      buzzer: true,
      printer,
      scanner,
      boot: this.boot,
      jobs: this.jobs.states(),
      ...(this.e2eKey ? { e2e_public_key: this.e2eKey.publicKey } : {}),
      ...(this.updater?.lastReport ? { update: this.updater.lastReport } : {}),
    };
    const key = JSON.stringify(body);
    if (key === this.lastState) return;
    const state: BoxState = { v: BOX_PROTOCOL_VERSION, at: Date.now(), ...body };
    await this.link.publish(topics.state(this.uuid), JSON.stringify(state), { qos: 1, retain: true });
    this.lastState = key;
  }

  private cap: { key: string; value: PrinterCapability | null } | undefined;

  /**
   * The printer's capability tree, read when the printer appears or changes (make, model) and
   * kept otherwise: the full attribute set is large, the status poll is every few seconds.
   */
  private async capability(status: PrinterStatus): Promise<{ capability?: PrinterCapability | null }> {
    if (!status.connected) {
      this.cap = undefined;
      return {};
    }
    const key = `${status.make ?? ''}\u0000${status.model ?? ''}\u0000${status.supported}`;
    if (this.cap?.key !== key) {
      try {
        this.cap = { key, value: await this.o.printer.capability() };
      } catch (e) {
        this.log('printer capability not read', { error: messageOf(e) });
        return {};
      }
    }
    return { capability: this.cap.value };
  }

  private async onCommand(payload: Buffer): Promise<void> {
    const m = parseJson(Command, payload);
    if (!m.ok) {
      this.log('bad command', { error: m.error });
      return;
    }
    const cmd = m.value;
    // One-way messages: nothing to acknowledge.
    if (cmd.type === 'events.ack') {
      const p = parseJson(EventsAckParams, JSON.stringify(cmd.params));
      if (p.ok) await this.outbox.ack(p.value.ids);
      return;
    }
    if (cmd.type === 'reply') {
      const p = parseJson(ReplyParams, JSON.stringify(cmd.params));
      if (p.ok) this.requests.resolve(p.value);
      return;
    }
    // QoS 1 may deliver a command twice: answer the repeat with the first answer, do nothing.
    const earlier = this.acks.get(cmd.id);
    if (earlier) {
      await this.sendAck(cmd, earlier);
      return;
    }
    if (this.seen.includes(cmd.id)) return;
    this.remember(cmd.id);
    const handler = handlerFor(cmd.type);
    const afterAck: (() => Promise<void>)[] = [];
    const ctx: CommandContext = {
      printer: this.o.printer,
      scanner: this.o.scanner,
      buzzer: this.o.buzzer,
      reboot: () => this.o.reboot(this),
      later: (work) => {
        afterAck.push(work);
      },
      updater: this.updater,
      jobs: this.jobs,
    };
    let body: Omit<Ack, 'v' | 'id'>;
    // A command delivered after its expiry (held in a broker queue or a stalled connection)
    // is refused, not run late: the server has answered its caller with 30005 by then, and a
    // reboot or a heavy ink flush nobody is waiting for must not happen. expires_at is the
    // server's clock; boxes keep theirs with NTP (docs/box-protocol.md).
    const lateMs = Date.now() - cmd.expires_at;
    try {
      body =
        lateMs > 0
          ? {
              ok: false,
              reason: 'expired',
              message: `command expired ${lateMs} ms before it could run (by the box's clock)`,
            }
          : handler
            ? await handler(cmd, ctx)
            : { ok: false, reason: 'not_supported', message: `unknown command '${cmd.type}'` };
    } catch (e) {
      body = { ok: false, reason: 'failed', message: messageOf(e) };
    }
    if (lateMs > 0) this.log('command expired', { id: cmd.id, type: cmd.type, late_ms: lateMs });
    const ack: Ack = { v: BOX_PROTOCOL_VERSION, id: cmd.id, ...body };
    this.acks.set(cmd.id, ack);
    await this.sendAck(cmd, ack);
    for (const w of afterAck)
      await w().catch((e: unknown) => this.log(`${cmd.type} failed after ack`, { error: messageOf(e) }));
    void this.reportState();
  }

  private async sendAck(cmd: Command, ack: Ack): Promise<void> {
    await this.link
      .publish(topics.ack(this.uuid, cmd.reply_to), JSON.stringify(ack), { qos: 1 })
      .catch((e: unknown) => this.log('ack not sent', { error: messageOf(e) }));
  }

  private remember(id: string): void {
    this.seen.push(id);
    if (this.seen.length > 200) {
      const old = this.seen.shift();
      if (old) this.acks.delete(old);
    }
  }

  private log(msg: string, extra?: Record<string, unknown>): void {
    this.o.log?.(msg, extra);
  }
}
