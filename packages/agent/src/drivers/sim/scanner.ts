// A virtual duplex ADF scanner: `sim:` or `sim:?make=...&model=...`. Scanning itself arrives
// with the scan feature; this reports status and faults.
import { EventEmitter } from 'node:events';
import type { ScannerStatus } from '@boxhub/protocol';
import type { ScannerDriver } from '../types.ts';
import type { SimScannerFault } from './faults.ts';

export class SimScanner implements ScannerDriver {
  readonly uri: string;
  private readonly events = new EventEmitter();
  private fault: SimScannerFault | null = null;
  private connected = true;
  readonly make: string;
  readonly model: string;

  constructor(uri: string) {
    this.uri = uri;
    const q = new URLSearchParams(uri.replace(/^sim:\/*/, '').replace(/^[^?]*\?/, ''));
    this.make = q.get('make') ?? 'boxhub';
    this.model = q.get('model') ?? 'Sim Duplex ADF';
    if (q.get('connected') === '0') this.connected = false;
  }

  setFault(fault: SimScannerFault | null): void { this.fault = fault; this.events.emit('change'); }
  setConnected(connected: boolean): void { this.connected = connected; this.events.emit('change'); }

  async status(): Promise<ScannerStatus> {
    if (!this.connected) return { connected: false, supported: false };
    return {
      connected: true, supported: true, make: this.make, model: this.model, connection_type: 'virtual',
      state: this.fault && this.fault !== 'no-docs' ? 'stopped' : 'idle',
      error_code: this.fault === 'jammed' ? 2001 : this.fault === 'cover-open' ? 2002 : 0,
      adf_loaded: this.fault !== 'no-docs', duplex: true, resolutions: [100, 150, 200, 240, 300, 400, 600],
    };
  }

  watch(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> { this.events.removeAllListeners(); }
}
