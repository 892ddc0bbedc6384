// The agent: owns the link, the printer and scanner drivers, the buzzer, and the command
// dispatch. Reports its full state on connect and whenever it changes (drivers that can push
// changes do; the others are polled).
import { BOX_PROTOCOL_VERSION, Command, parseJson, topics, type Ack, type BoxState, type CommandType } from '@boxhub/protocol';
import { commandHandlers, type CommandContext } from './commands/index.ts';
import type { PrinterDriver, ScannerDriver } from './drivers/types.ts';
import type { Buzzer } from './host/buzzer.ts';
import type { NetworkInfo } from './host/network.ts';
import { BoxLink, type LinkOptions } from './link/connection.ts';

export interface BoxIdentity { model: string; version: string; firmware: string }

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
}

export class BoxAgent {
  readonly link: BoxLink;
  private readonly o: AgentOptions;
  private lastState = '';
  private poll: NodeJS.Timeout | undefined;
  private readonly unwatch: (() => void)[] = [];
  private readonly seen: string[] = [];
  private readonly acks = new Map<string, Ack>();
  private publishing: Promise<void> = Promise.resolve();

  constructor(o: AgentOptions) {
    this.o = o;
    this.link = new BoxLink(o.link);
    this.link.on('connected', () => { this.lastState = ''; void this.reportState(); });
    this.link.on('message', (topic, payload) => { if (topic === topics.cmd(o.link.uuid)) void this.onCommand(payload); });
    this.link.on('error', (err) => this.log('link error', { error: err.message }));
  }

  get uuid(): string { return this.o.link.uuid; }
  get printer(): PrinterDriver { return this.o.printer; }
  get scanner(): ScannerDriver { return this.o.scanner; }

  start(): void {
    this.link.start();
    for (const d of [this.o.printer, this.o.scanner]) {
      const off = d.watch?.(() => void this.reportState());
      if (off) this.unwatch.push(off);
    }
    this.poll = setInterval(() => void this.reportState(), this.o.statusIntervalMs ?? 10_000);
    this.poll.unref?.();
  }

  async stop(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    for (const off of this.unwatch.splice(0)) off();
    await this.link.stop();
  }

  /** Publishes the box state if it changed since the last report (or after a reconnect). */
  reportState(): Promise<void> {
    // Serialised: two overlapping reports must not publish out of order.
    this.publishing = this.publishing.then(() => this.doReport()).catch((e: unknown) => this.log('state report failed', { error: (e as Error).message }));
    return this.publishing;
  }

  private async doReport(): Promise<void> {
    if (!this.link.connected) return;
    const [printer, scanner, net] = await Promise.all([this.o.printer.status(), this.o.scanner.status(), this.o.network()]);
    const body = { ...net, model: this.o.identity.model, version: this.o.identity.version, firmware: this.o.identity.firmware, buzzer: true, printer, scanner };
    const key = JSON.stringify(body);
    if (key === this.lastState) return;
    const state: BoxState = { v: BOX_PROTOCOL_VERSION, at: Date.now(), ...body };
    await this.link.publish(topics.state(this.uuid), JSON.stringify(state), { qos: 1, retain: true });
    this.lastState = key;
  }

  private async onCommand(payload: Buffer): Promise<void> {
    const m = parseJson(Command, payload);
    if (!m.ok) { this.log('bad command', { error: m.error }); return; }
    const cmd = m.value;
    // QoS 1 may deliver a command twice: answer the repeat with the first answer, do nothing.
    const earlier = this.acks.get(cmd.id);
    if (earlier) { await this.sendAck(cmd, earlier); return; }
    if (this.seen.includes(cmd.id)) return;
    this.remember(cmd.id);
    const handler = (commandHandlers as Record<string, (typeof commandHandlers)[CommandType]>)[cmd.type];
    const afterAck: (() => Promise<void>)[] = [];
    const ctx: CommandContext = {
      printer: this.o.printer, scanner: this.o.scanner, buzzer: this.o.buzzer,
      reboot: () => this.o.reboot(this),
      later: (work) => { afterAck.push(work); },
    };
    let body: Omit<Ack, 'v' | 'id'>;
    try {
      body = handler ? await handler(cmd, ctx) : { ok: false, reason: 'not_supported', message: `unknown command '${cmd.type}'` };
    } catch (e) {
      body = { ok: false, reason: 'failed', message: (e as Error).message };
    }
    const ack: Ack = { v: BOX_PROTOCOL_VERSION, id: cmd.id, ...body };
    this.acks.set(cmd.id, ack);
    await this.sendAck(cmd, ack);
    for (const w of afterAck) await w().catch((e: unknown) => this.log(`${cmd.type} failed after ack`, { error: (e as Error).message }));
    void this.reportState();
  }

  private async sendAck(cmd: Command, ack: Ack): Promise<void> {
    await this.link.publish(topics.ack(this.uuid, cmd.reply_to), JSON.stringify(ack), { qos: 1 }).catch((e: unknown) => this.log('ack not sent', { error: (e as Error).message }));
  }

  private remember(id: string): void {
    this.seen.push(id);
    if (this.seen.length > 200) {
      const old = this.seen.shift();
      if (old) this.acks.delete(old);
    }
  }

  private log(msg: string, extra?: Record<string, unknown>): void { this.o.log?.(msg, extra); }
}
