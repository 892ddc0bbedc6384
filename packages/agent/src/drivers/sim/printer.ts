// A virtual printer for the simulator and the tests: `sim:` or `sim:?kind=inkjet&strict=1&
// make=Epson&model=ET-2850&maintenance=head_clean,nozzle_check,power_ink_flush`. Faults are
// switched on at run time (setFault) or from the URI (`fault=media-empty`).
import { EventEmitter } from 'node:events';
import type { PrinterStatus } from '@boxhub/protocol';
import { printerErrorFor, type SimPrinterFault } from './faults.ts';
import { NotSupportedError, type MaintenanceOp, type PrinterDriver } from '../types.ts';

const OPS: MaintenanceOp[] = ['head_clean', 'power_ink_flush', 'nozzle_check'];

export class SimPrinter implements PrinterDriver {
  readonly uri: string;
  private readonly events = new EventEmitter();
  private fault: SimPrinterFault | null;
  private connected = true;
  readonly kind: 'inkjet' | 'laser';
  readonly strict: boolean;
  readonly make: string;
  readonly model: string;
  readonly ops: MaintenanceOp[];
  /** Every maintenance operation run, in order (tests read it). */
  readonly history: MaintenanceOp[] = [];

  constructor(uri: string) {
    this.uri = uri;
    const q = new URLSearchParams(uri.replace(/^sim:\/*/, '').replace(/^[^?]*\?/, ''));
    this.kind = q.get('kind') === 'laser' ? 'laser' : 'inkjet';
    this.strict = q.get('strict') !== '0';
    this.make = q.get('make') ?? 'boxhub';
    this.model = q.get('model') ?? (this.kind === 'inkjet' ? 'Sim Inkjet' : 'Sim Laser');
    const m = q.get('maintenance');
    this.ops = m === null ? (this.kind === 'inkjet' ? OPS : []) : (m.split(',').filter((x): x is MaintenanceOp => (OPS as string[]).includes(x)));
    this.fault = (q.get('fault') as SimPrinterFault | null) ?? null;
    if (q.get('connected') === '0') this.connected = false;
  }

  setFault(fault: SimPrinterFault | null): void { this.fault = fault; this.events.emit('change'); }
  setConnected(connected: boolean): void { this.connected = connected; this.events.emit('change'); }

  async status(): Promise<PrinterStatus> {
    if (!this.connected) return { connected: false, supported: false, error_code: 0 };
    const err = this.fault ? printerErrorFor(this.fault) : 0;
    return {
      connected: true, supported: true, make: this.make, model: this.model, connection_type: 'virtual',
      error_code: err, state: this.fault ? 'stopped' : 'idle',
      state_reasons: this.fault ? [`${this.fault}-error`] : ['none'],
      kind: this.kind, strict: this.strict, maintenance: this.ops,
    };
  }

  async maintenance(op: MaintenanceOp): Promise<void> {
    if (!this.connected) throw new Error('printer is not connected');
    if (!this.ops.includes(op)) throw new NotSupportedError(`${this.model} does not support ${op}`);
    if (this.fault) throw new Error(`printer reports ${this.fault}`);
    this.history.push(op);
  }

  watch(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> { this.events.removeAllListeners(); }
}
