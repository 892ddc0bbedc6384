// ScannerDriver for eSCL (AirScan) scanners, status only: URI `escl:http://host:port/eSCL`
// (or https). Reads GET {base}/ScannerCapabilities and GET {base}/ScannerStatus (Mopria eSCL
// spec; flow in design/device-notes.md). Elements are read by name, so the pwg:/scan:
// prefixes a device picks do not matter.
import http from 'node:http';
import https from 'node:https';
import type { ScannerStatus } from '@boxhub/protocol';
import { disconnectedScanner, type ScannerDriver } from '../types.ts';
import { connectionTypeFor } from '../ipp/printer-status.ts';

export interface EsclScannerDriverOptions { timeoutMs?: number; rejectUnauthorized?: boolean }

/** Text of every element named `local` (any namespace prefix). */
export function elements(xml: string, local: string): string[] {
  const re = new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w.-]+:)?${local}>`, 'g');
  return [...xml.matchAll(re)].map((m) => m[1]!.trim());
}

export class EsclScannerDriver implements ScannerDriver {
  readonly uri: string;
  private readonly base: URL;
  private readonly opts: Required<EsclScannerDriverOptions>;

  constructor(uri: string, options: EsclScannerDriverOptions = {}) {
    if (!/^escl:https?:\/\//.test(uri)) throw new TypeError(`not an escl:http(s)://… URI: ${uri}`);
    this.uri = uri;
    this.base = new URL(uri.slice('escl:'.length).replace(/\/?$/, '/'));
    this.opts = { timeoutMs: 10_000, rejectUnauthorized: false, ...options };
  }

  private get(path: string, signal?: AbortSignal): Promise<string> {
    const url = new URL(path, this.base);
    const lib = url.protocol === 'https:' ? https : http;
    const all = AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), ...(signal ? [signal] : [])]);
    return new Promise((resolve, reject) => {
      const req = lib.get(url, { signal: all, rejectUnauthorized: this.opts.rejectUnauthorized, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { if (body.length < 1 << 20) body += c; });
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url} → HTTP ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  }

  async status(signal?: AbortSignal): Promise<ScannerStatus> {
    const ipp = `ipp://${this.base.host}/`;
    try {
      const [caps, st] = await Promise.all([this.get('ScannerCapabilities', signal), this.get('ScannerStatus', signal)]);
      const makeModel = elements(caps, 'MakeAndModel')[0] ?? '';
      const make = elements(caps, 'Manufacturer')[0] ?? makeModel.split(/\s+/)[0] ?? '';
      const model = makeModel.toLowerCase().startsWith(make.toLowerCase()) ? makeModel.slice(make.length).trim() : makeModel;
      const resolutions = [...new Set(elements(caps, 'XResolution').map(Number).filter((n) => Number.isInteger(n) && n >= 1 && n <= 4800))].sort((a, b) => a - b).slice(0, 16);
      const state = elements(st, 'State')[0];
      const adf = elements(st, 'AdfState')[0];
      const s: ScannerStatus = {
        connected: true,
        supported: resolutions.length > 0 && /<(?:[\w.-]+:)?(?:Platen|Adf)[\s>]/.test(caps),
        connection_type: connectionTypeFor(ipp),
        duplex: /<(?:[\w.-]+:)?AdfDuplexInputCaps[\s>]/.test(caps),
        resolutions,
      };
      if (make) s.make = make.slice(0, 128);
      if (model) s.model = model.slice(0, 128);
      if (state === 'Idle' || state === 'Processing' || state === 'Stopped') s.state = state === 'Idle' ? 'idle' : state === 'Processing' ? 'processing' : 'stopped';
      if (adf) s.adf_loaded = adf === 'ScannerAdfLoaded';
      return s;
    } catch (e) {
      if (signal?.aborted) throw e;
      return { ...disconnectedScanner, connection_type: connectionTypeFor(ipp) };
    }
  }

  async close(): Promise<void> {
    // agent: false: no pooled sockets to free.
  }
}
