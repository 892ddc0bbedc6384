// Test fixture: a small eSCL scanner (node:http on port 0). No eSCL scanner server exists in
// Debian (sane-airscan and SANE's escl backend are clients; ippsample's server does not
// install on bookworm; docs/printers-and-scanners.md, "eSCL scanning"), so the tests bring their own. It answers the
// way real devices do (pwg:/scan: namespaces, 201 + Location, one page per NextDocument, 404
// at the end, AdfState in ScannerStatus) and renders every page with the real SANE `test`
// backend through scanimage, encoded as JPEG at the quality its CompressionFactor asks for
// (lower factor, better image), as a device's own encoder would.
//
// Its feeder holds `sheets`; a duplex job gives two pages per sheet. It honours the scan
// region asked for (a smaller region is a smaller page), lists its jobs in ScannerStatus
// (JobInfo: JobUri, JobState, JobStateReasons, ImagesCompleted) and reports State Processing
// while one runs. Faults and quirks, each as real devices report them (design: "eSCL"):
// faultAfter(n, AdfState) (a jam, misfeed or open door after n sheets; NextDocument then
// answers `faultStatus`), a feeder running empty mid-job answered with `emptyStatus` instead of
// 404, 503 with Retry-After while busy (`busy`), 409 to a second job while one runs, a job
// dropped after `timeoutAfterPages` pages as a device drops a job its client was too slow for,
// a 503 on the first NextDocument of each job, a relative Location, and a log of every request.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
  /** Answer ScanJobs and NextDocument `503` with `Retry-After: retryAfter` (seconds) to this
   *  many requests (set later with `busyFor`). */
  busy?: { requests: number; retryAfter: number };
  /** Status NextDocument answers when the feeder runs empty mid-job (default 404). */
  emptyStatus?: number;
  /** Status NextDocument answers once faultAfter's fault has happened (default 404). */
  faultStatus?: number;
  /** Drop a job after it has given this many pages, as a device drops a job whose client
   *  did not come back in time (JobState Aborted, JobTimedOut; NextDocument 404). */
  timeoutAfterPages?: number;
}

/** What configure() changes on a running server (EsclServerOptions' fields of these names). */
export interface EsclBehaviour {
  emptyStatus?: number | undefined;
  faultStatus?: number | undefined;
  timeoutAfterPages?: number | undefined;
}

export interface EsclJob {
  id: string;
  settings: Record<string, string>;
  pages: number;
  deleted: boolean;
  /** eSCL JobState: Processing until NextDocument's end (Completed), a DELETE (Canceled), or
   *  a fault or timeout (Aborted). */
  state: 'Processing' | 'Completed' | 'Canceled' | 'Aborted';
  reasons: string[];
  /** The size of each page it gave, px. */
  sizes: Array<[number, number]>;
}

export interface EsclServer {
  readonly uri: string;
  /** AdfState reported: an override when set (null: follow the feeder). */
  adfState: string | null;
  sheets: number;
  jamAfter(sheets: number): void;
  /** After `sheets` more sheets the feeder reports `adfState` (ScannerAdfJam, ScannerAdfMispick,
   *  ScannerAdfDoorOpen…) and the job is aborted. */
  faultAfter(sheets: number, adfState: string): void;
  /** The next `requests` ScanJobs / NextDocument requests get 503 with Retry-After. */
  busyFor(requests: number, retryAfter: number): void;
  configure(c: EsclBehaviour): void;
  readonly jobs: EsclJob[];
  readonly requests: string[];
  close(): Promise<void>;
}

/** One source's input caps as devices list them: size limits, setting profiles (colour modes,
 *  formats, resolutions) and intents, for the platen and for each feeder mode alike. */
const inputCaps = (tag: string, maxHeight: number) => `<scan:${tag}>
    <scan:MinWidth>16</scan:MinWidth><scan:MaxWidth>2550</scan:MaxWidth>
    <scan:MinHeight>16</scan:MinHeight><scan:MaxHeight>${maxHeight}</scan:MaxHeight>
    <scan:MaxScanRegions>1</scan:MaxScanRegions>
    <scan:SettingProfiles><scan:SettingProfile>
      <scan:ColorModes><scan:ColorMode>RGB24</scan:ColorMode><scan:ColorMode>Grayscale8</scan:ColorMode></scan:ColorModes>
      <scan:DocumentFormats><pwg:DocumentFormat>image/jpeg</pwg:DocumentFormat><scan:DocumentFormatExt>image/jpeg</scan:DocumentFormatExt></scan:DocumentFormats>
      <scan:SupportedResolutions><scan:DiscreteResolutions>
        <scan:DiscreteResolution><scan:XResolution>300</scan:XResolution><scan:YResolution>300</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>150</scan:XResolution><scan:YResolution>150</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>600</scan:XResolution><scan:YResolution>600</scan:YResolution></scan:DiscreteResolution>
      </scan:DiscreteResolutions></scan:SupportedResolutions>
    </scan:SettingProfile></scan:SettingProfiles>
    <scan:SupportedIntents><scan:Intent>Document</scan:Intent><scan:Intent>TextAndGraphic</scan:Intent><scan:Intent>Photo</scan:Intent></scan:SupportedIntents>
    <scan:MaxOpticalXResolution>600</scan:MaxOpticalXResolution><scan:MaxOpticalYResolution>600</scan:MaxOpticalYResolution>
  </scan:${tag}>`;

const caps = `<?xml version="1.0" encoding="UTF-8"?>
<scan:ScannerCapabilities xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm">
  <pwg:Version>2.63</pwg:Version>
  <pwg:MakeAndModel>Boxhub Mock Scanner 1</pwg:MakeAndModel>
  <scan:Manufacturer>Boxhub</scan:Manufacturer>
  <scan:Platen>${inputCaps('PlatenInputCaps', 3508)}</scan:Platen>
  <scan:Adf>${inputCaps('AdfSimplexInputCaps', 4200)}${inputCaps('AdfDuplexInputCaps', 4200)}
    <scan:FeederCapacity>50</scan:FeederCapacity>
    <scan:AdfOptions><scan:AdfOption>DetectPaperLoaded</scan:AdfOption><scan:AdfOption>Duplex</scan:AdfOption></scan:AdfOptions>
  </scan:Adf>
  <scan:CompressionFactorSupport><scan:Min>0</scan:Min><scan:Max>100</scan:Max><scan:Normal>25</scan:Normal><scan:Step>1</scan:Step></scan:CompressionFactorSupport>
</scan:ScannerCapabilities>`;

function text(xml: string, local: string): string | undefined {
  return new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^>]*)?>([^<]*)</`).exec(xml)?.[1]?.trim();
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let b = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      b += c;
    });
    req.on('end', () => resolve(b));
    req.on('error', reject);
  });
}

/** One page from the SANE test backend (real scanimage), as PNM on stdout. */
function scanPage(
  sane: SaneTestConfig,
  dpi: number,
  grey: boolean,
  picture: string,
  region: string[],
): Promise<{ data: Buffer; width: number; height: number; channels: 1 | 3 }> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      'scanimage',
      [
        '-d',
        'test',
        '--mode',
        grey ? 'Gray' : 'Color',
        '--resolution',
        String(dpi),
        '--test-picture',
        picture,
        ...region,
        '--format=pnm',
      ],
      { env: sane.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => out.push(c));
    p.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    p.on('error', reject);
    p.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`scanimage exited ${code}: ${err}`));
        return;
      }
      const pnm = Buffer.concat(out);
      // P5/P6, optional comment lines, width height, maxval, one whitespace byte, samples.
      const head = /^(P[56])\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(pnm.subarray(0, 200).toString('latin1'));
      if (!head) {
        reject(new Error('scanimage wrote no PNM header'));
        return;
      }
      const width = Number(head[2]),
        height = Number(head[3]);
      resolve({ data: pnm.subarray(head[0].length), width, height, channels: head[1] === 'P5' ? 1 : 3 });
    });
  });
}

/** The scan region asked for, as the SANE test backend's -l -t -x -y in mm; nothing for A4 or
 *  more (the backend's whole area, which is A4). ScanSettings regions are in 1/300 inch. */
function regionArgs(settings: Record<string, string>): string[] {
  const mm = (k: string) => (Number(settings[k] ?? 0) * 25.4) / 300;
  const w = mm('Width'),
    h = mm('Height');
  if (!(w > 0 && h > 0) || (w >= 209.9 && h >= 296.9)) return [];
  return [
    '-l',
    mm('XOffset').toFixed(2),
    '-t',
    mm('YOffset').toFixed(2),
    '-x',
    Math.min(w, 210).toFixed(2),
    '-y',
    Math.min(h, 297).toFixed(2),
  ];
}

const NS =
  'xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm"';

export async function startEsclServer(o: EsclServerOptions = {}): Promise<EsclServer> {
  // Behaviours a running server can be given later (configure()).
  const cfg: EsclBehaviour = {
    emptyStatus: o.emptyStatus,
    faultStatus: o.faultStatus,
    timeoutAfterPages: o.timeoutAfterPages,
  };
  const ownSane = o.sane ? undefined : saneTestConfig();
  const sane = o.sane ?? ownSane!;
  const picture = o.testPicture ?? 'Color pattern';
  const state = {
    sheets: o.sheets ?? 10,
    override: null as string | null,
    faultIn: undefined as number | undefined,
    faultState: 'ScannerAdfJam',
    fault: null as string | null,
    busy: o.busy?.requests ?? 0,
    retryAfter: o.busy?.retryAfter ?? 1,
  };
  const jobs: EsclJob[] = [];
  const requests: string[] = [];
  const adf = () => state.override ?? state.fault ?? (state.sheets > 0 ? 'ScannerAdfLoaded' : 'ScannerAdfEmpty');
  const backPending = new Map<string, boolean>();
  const busyLeft = new Map<string, number>();
  const active = () => jobs.find((j) => j.state === 'Processing');
  const end = (job: EsclJob, st: EsclJob['state'], reason: string) => {
    if (job.state === 'Processing') {
      job.state = st;
      job.reasons = [reason];
    }
  };
  /** 503 + Retry-After while `busy` lasts (a device busy with its panel, warming up). */
  const busyNow = (res: ServerResponse) => {
    if (state.busy <= 0) return false;
    state.busy--;
    res.writeHead(503, { 'retry-after': String(state.retryAfter) }).end();
    return true;
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '';
      requests.push(`${req.method} ${url}`);
      if (req.method === 'GET' && url === '/eSCL/ScannerCapabilities') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(caps);
        return;
      }
      if (req.method === 'GET' && url === '/eSCL/ScannerStatus') {
        const infos = jobs
          .slice(-8)
          .map(
            (j) =>
              `<scan:JobInfo><pwg:JobUri>/eSCL/ScanJobs/${j.id}</pwg:JobUri><pwg:JobUuid>${j.id}</pwg:JobUuid><scan:Age>1</scan:Age><pwg:ImagesCompleted>${j.pages}</pwg:ImagesCompleted><pwg:ImagesToTransfer>${j.state === 'Processing' ? 1 : 0}</pwg:ImagesToTransfer><pwg:JobState>${j.state}</pwg:JobState><pwg:JobStateReasons>${j.reasons.map((r) => `<pwg:JobStateReason>${r}</pwg:JobStateReason>`).join('')}</pwg:JobStateReasons></scan:JobInfo>`,
          )
          .join('');
        res.writeHead(200, { 'content-type': 'text/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>
<scan:ScannerStatus ${NS}>
  <pwg:Version>2.63</pwg:Version><pwg:State>${active() ? 'Processing' : 'Idle'}</pwg:State><scan:AdfState>${adf()}</scan:AdfState>
  <scan:Jobs>${infos}</scan:Jobs>
</scan:ScannerStatus>`);
        return;
      }
      if (req.method === 'POST' && url === '/eSCL/ScanJobs') {
        const xml = await body(req);
        if (busyNow(res)) return;
        const settings: Record<string, string> = {};
        for (const k of [
          'Version',
          'Intent',
          'InputSource',
          'DocumentFormat',
          'DocumentFormatExt',
          'ColorMode',
          'XResolution',
          'YResolution',
          'Duplex',
          'CompressionFactor',
          'XOffset',
          'YOffset',
          'Width',
          'Height',
          'ContentRegionUnits',
        ]) {
          const v = text(xml, k);
          if (v !== undefined) settings[k] = v;
        }
        // One job at a time, as devices do: a second client gets 409 Conflict.
        if (active()) {
          res.writeHead(409).end();
          return;
        }
        if (settings.InputSource === 'Feeder' && (state.sheets === 0 || state.fault || state.override)) {
          res.writeHead(409).end();
          return;
        }
        const id = randomUUID();
        jobs.push({ id, settings, pages: 0, deleted: false, state: 'Processing', reasons: ['JobScanning'], sizes: [] });
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
        end(job, 'Canceled', 'JobCanceledByUser');
        res.writeHead(200).end();
        return;
      }
      if (job && req.method === 'GET' && m![2]) {
        if (job.state !== 'Processing') {
          res.writeHead(404).end();
          return;
        }
        const busy = busyLeft.get(job.id) ?? 0;
        if (busy > 0) {
          busyLeft.set(job.id, busy - 1);
          res.writeHead(503, { 'retry-after': '0' }).end();
          return;
        }
        if (busyNow(res)) return;
        if (cfg.timeoutAfterPages !== undefined && job.pages >= cfg.timeoutAfterPages) {
          end(job, 'Aborted', 'JobTimedOut');
          res.writeHead(404).end();
          return;
        }
        const feeder = job.settings.InputSource === 'Feeder';
        const duplex = feeder && job.settings.Duplex === 'true';
        const back = backPending.get(job.id) ?? false;
        if (!back) {
          if (feeder && state.faultIn !== undefined && state.faultIn-- === 0) {
            state.fault = state.faultState;
            state.faultIn = undefined;
          }
          if (feeder && state.fault) {
            end(job, 'Aborted', 'AdfError');
            res.writeHead(cfg.faultStatus ?? 404).end();
            return;
          }
          if (feeder && state.sheets === 0) {
            end(job, 'Completed', 'JobCompletedSuccessfully');
            res.writeHead(job.pages > 0 ? (cfg.emptyStatus ?? 404) : 404).end();
            return;
          }
          if (!feeder && job.pages > 0) {
            end(job, 'Completed', 'JobCompletedSuccessfully');
            res.writeHead(404).end();
            return;
          }
          if (feeder) state.sheets--;
        }
        backPending.set(job.id, duplex && !back);
        const dpi = Number(job.settings.XResolution ?? 300);
        const grey = job.settings.ColorMode === 'Grayscale8';
        const cf = job.settings.CompressionFactor === undefined ? 25 : Number(job.settings.CompressionFactor);
        const quality = Math.min(100, Math.max(1, Math.round(100 - (cf * 99) / 100)));
        const page = await scanPage(sane, dpi, grey, picture, regionArgs(job.settings));
        let s = sharp(page.data, { raw: { width: page.width, height: page.height, channels: page.channels } });
        s = grey ? s.toColourspace('b-w') : s;
        const jpeg = await s.jpeg({ quality }).toBuffer();
        job.pages++;
        job.sizes.push([page.width, page.height]);
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg);
        return;
      }
      res.writeHead(404).end();
    })().catch((e: unknown) => {
      res.writeHead(500).end(String(e));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    uri: `escl:http://127.0.0.1:${port}/eSCL`,
    get adfState() {
      return adf();
    },
    set adfState(v: string | null) {
      state.override = v;
    },
    get sheets() {
      return state.sheets;
    },
    set sheets(n: number) {
      state.sheets = n;
      state.fault = null;
    },
    jamAfter(n: number) {
      state.faultIn = n;
      state.faultState = 'ScannerAdfJam';
    },
    faultAfter(n: number, adfState: string) {
      state.faultIn = n;
      state.faultState = adfState;
    },
    busyFor(n: number, retryAfter: number) {
      state.busy = n;
      state.retryAfter = retryAfter;
    },
    configure(c) {
      Object.assign(cfg, c);
    },
    jobs,
    requests,
    close: async () => {
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
      ownSane?.close();
    },
  };
}
