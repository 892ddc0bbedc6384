// Test fixture: a small eSCL scanner (node:http on port 0). No eSCL scanner server exists in
// Debian (sane-airscan and SANE's escl backend are clients; ippsample's server does not
// install on bookworm, design/device-notes.md), so the tests bring their own. It answers the
// way real devices do (pwg:/scan: namespaces, 201 + Location, one page per NextDocument, 404
// at the end, AdfState in ScannerStatus) and renders every page with the real SANE `test`
// backend through scanimage, encoded as JPEG at the quality its CompressionFactor asks for
// (lower factor, better image), as a device's own encoder would.
//
// Its feeder holds `sheets`; a duplex job gives two pages per sheet. Faults and quirks:
// jamAfter(n) (AdfState ScannerAdfJam, NextDocument 404), an `adfState` override, a 503 on the
// first NextDocument of each job, a relative Location, and a log of every request and job.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import sharp from 'sharp';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';

export interface EsclServerOptions {
  /** SANE test backend config for scanimage (default: one of its own, removed on close). */
  sane?: SaneTestConfig;
  /** Sheets in the feeder at start (default 10). */
  sheets?: number;
  /** Answer ScanJobs with a relative Location (/eSCL/ScanJobs/<id>). */
  relativeLocation?: boolean;
  /** 503 to this many NextDocument calls at the start of each job (a real device warming up). */
  busyFirst?: number;
  testPicture?: string;
}

export interface EsclJob {
  id: string;
  settings: Record<string, string>;
  pages: number;
  deleted: boolean;
}

export interface EsclServer {
  readonly uri: string;
  /** AdfState reported: an override when set (null: follow the feeder). */
  adfState: string | null;
  sheets: number;
  jamAfter(sheets: number): void;
  readonly jobs: EsclJob[];
  readonly requests: string[];
  close(): Promise<void>;
}

const caps = `<?xml version="1.0" encoding="UTF-8"?>
<scan:ScannerCapabilities xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm">
  <pwg:Version>2.63</pwg:Version>
  <pwg:MakeAndModel>Boxhub Mock Scanner 1</pwg:MakeAndModel>
  <scan:Manufacturer>Boxhub</scan:Manufacturer>
  <scan:Platen><scan:PlatenInputCaps>
    <scan:MaxWidth>2550</scan:MaxWidth><scan:MaxHeight>3508</scan:MaxHeight>
    <scan:SettingProfiles><scan:SettingProfile>
      <scan:ColorModes><scan:ColorMode>RGB24</scan:ColorMode><scan:ColorMode>Grayscale8</scan:ColorMode></scan:ColorModes>
      <scan:DocumentFormats><pwg:DocumentFormat>image/jpeg</pwg:DocumentFormat></scan:DocumentFormats>
      <scan:SupportedResolutions><scan:DiscreteResolutions>
        <scan:DiscreteResolution><scan:XResolution>300</scan:XResolution><scan:YResolution>300</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>150</scan:XResolution><scan:YResolution>150</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>600</scan:XResolution><scan:YResolution>600</scan:YResolution></scan:DiscreteResolution>
      </scan:DiscreteResolutions></scan:SupportedResolutions>
    </scan:SettingProfile></scan:SettingProfiles>
  </scan:PlatenInputCaps></scan:Platen>
  <scan:Adf><scan:AdfSimplexInputCaps><scan:MaxWidth>2550</scan:MaxWidth><scan:MaxHeight>4200</scan:MaxHeight></scan:AdfSimplexInputCaps>
    <scan:AdfDuplexInputCaps><scan:MaxWidth>2550</scan:MaxWidth><scan:MaxHeight>4200</scan:MaxHeight></scan:AdfDuplexInputCaps>
    <scan:FeederCapacity>50</scan:FeederCapacity></scan:Adf>
  <scan:CompressionFactorSupport><scan:Min>0</scan:Min><scan:Max>100</scan:Max><scan:Normal>25</scan:Normal><scan:Step>1</scan:Step></scan:CompressionFactorSupport>
</scan:ScannerCapabilities>`;

function text(xml: string, local: string): string | undefined {
  return new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^>]*)?>([^<]*)</`).exec(xml)?.[1]?.trim();
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let b = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { b += c; });
    req.on('end', () => resolve(b));
    req.on('error', reject);
  });
}

/** One page from the SANE test backend (real scanimage), as PNM on stdout. */
function scanPage(sane: SaneTestConfig, dpi: number, grey: boolean, picture: string): Promise<{ data: Buffer; width: number; height: number; channels: 1 | 3 }> {
  return new Promise((resolve, reject) => {
    const p = spawn('scanimage', ['-d', 'test', '--mode', grey ? 'Gray' : 'Color', '--resolution', String(dpi), '--test-picture', picture, '--format=pnm'], { env: sane.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => out.push(c));
    p.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    p.on('error', reject);
    p.on('close', (code) => {
      if (code !== 0) { reject(new Error(`scanimage exited ${code}: ${err}`)); return; }
      const pnm = Buffer.concat(out);
      // P5/P6, optional comment lines, width height, maxval, one whitespace byte, samples.
      const head = /^(P[56])\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(pnm.subarray(0, 200).toString('latin1'));
      if (!head) { reject(new Error('scanimage wrote no PNM header')); return; }
      const width = Number(head[2]), height = Number(head[3]);
      resolve({ data: pnm.subarray(head[0].length), width, height, channels: head[1] === 'P5' ? 1 : 3 });
    });
  });
}

export async function startEsclServer(o: EsclServerOptions = {}): Promise<EsclServer> {
  const ownSane = o.sane ? undefined : saneTestConfig();
  const sane = o.sane ?? ownSane!;
  const picture = o.testPicture ?? 'Color pattern';
  const state = { sheets: o.sheets ?? 10, override: null as string | null, jamIn: undefined as number | undefined, jammed: false };
  const jobs: EsclJob[] = [];
  const requests: string[] = [];
  const adf = () => state.override ?? (state.jammed ? 'ScannerAdfJam' : state.sheets > 0 ? 'ScannerAdfLoaded' : 'ScannerAdfEmpty');
  const backPending = new Map<string, boolean>();
  const busyLeft = new Map<string, number>();

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '';
      requests.push(`${req.method} ${url}`);
      if (req.method === 'GET' && url === '/eSCL/ScannerCapabilities') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(caps);
        return;
      }
      if (req.method === 'GET' && url === '/eSCL/ScannerStatus') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>
<scan:ScannerStatus xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm">
  <pwg:Version>2.63</pwg:Version><pwg:State>Idle</pwg:State><scan:AdfState>${adf()}</scan:AdfState>
</scan:ScannerStatus>`);
        return;
      }
      if (req.method === 'POST' && url === '/eSCL/ScanJobs') {
        const xml = await body(req);
        const settings: Record<string, string> = {};
        for (const k of ['Version', 'Intent', 'InputSource', 'DocumentFormat', 'DocumentFormatExt', 'ColorMode', 'XResolution', 'YResolution', 'Duplex', 'CompressionFactor', 'Width', 'Height', 'ContentRegionUnits']) {
          const v = text(xml, k);
          if (v !== undefined) settings[k] = v;
        }
        if (settings.InputSource === 'Feeder' && (state.sheets === 0 || state.jammed)) { res.writeHead(409).end(); return; }
        const id = randomUUID();
        jobs.push({ id, settings, pages: 0, deleted: false });
        busyLeft.set(id, o.busyFirst ?? 0);
        const path = `/eSCL/ScanJobs/${id}`;
        const port = (server.address() as { port: number }).port;
        res.writeHead(201, { location: o.relativeLocation ? path : `http://127.0.0.1:${port}${path}` }).end();
        return;
      }
      const m = /^\/eSCL\/ScanJobs\/([\w-]+)(\/NextDocument)?$/.exec(url);
      const job = m ? jobs.find((j) => j.id === m[1]) : undefined;
      if (job && req.method === 'DELETE' && !m![2]) {
        job.deleted = true;
        res.writeHead(200).end();
        return;
      }
      if (job && req.method === 'GET' && m![2]) {
        if (job.deleted) { res.writeHead(404).end(); return; }
        const busy = busyLeft.get(job.id) ?? 0;
        if (busy > 0) { busyLeft.set(job.id, busy - 1); res.writeHead(503).end(); return; }
        const feeder = job.settings.InputSource === 'Feeder';
        const duplex = feeder && job.settings.Duplex === 'true';
        const back = backPending.get(job.id) ?? false;
        if (!back) {
          if (feeder && state.jamIn !== undefined && state.jamIn-- === 0) { state.jammed = true; state.jamIn = undefined; }
          if ((feeder && (state.sheets === 0 || state.jammed)) || (!feeder && job.pages > 0)) { res.writeHead(404).end(); return; }
          if (feeder) state.sheets--;
        }
        backPending.set(job.id, duplex && !back);
        const dpi = Number(job.settings.XResolution ?? 300);
        const grey = job.settings.ColorMode === 'Grayscale8';
        const cf = job.settings.CompressionFactor === undefined ? 25 : Number(job.settings.CompressionFactor);
        const quality = Math.min(100, Math.max(1, Math.round(100 - (cf * 99) / 100)));
        const page = await scanPage(sane, dpi, grey, picture);
        let s = sharp(page.data, { raw: { width: page.width, height: page.height, channels: page.channels } });
        s = grey ? s.toColourspace('b-w') : s;
        const jpeg = await s.jpeg({ quality }).toBuffer();
        job.pages++;
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg);
        return;
      }
      res.writeHead(404).end();
    })().catch((e: unknown) => { res.writeHead(500).end(String(e)); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    uri: `escl:http://127.0.0.1:${port}/eSCL`,
    get adfState() { return adf(); },
    set adfState(v: string | null) { state.override = v; },
    get sheets() { return state.sheets; },
    set sheets(n: number) { state.sheets = n; state.jammed = false; },
    jamAfter(n: number) { state.jamIn = n; },
    jobs, requests,
    close: async () => {
      await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
      ownSane?.close();
    },
  };
}
