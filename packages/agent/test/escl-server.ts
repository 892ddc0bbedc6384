// Test fixture: a small eSCL scanner (node:http on port 0) answering ScannerCapabilities and
// ScannerStatus the way real devices do (pwg:/scan: namespaces), with a settable ADF state.
import { createServer, type Server } from 'node:http';

export interface EsclServer {
  readonly uri: string;
  adfState: string;
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
      <scan:SupportedResolutions><scan:DiscreteResolutions>
        <scan:DiscreteResolution><scan:XResolution>300</scan:XResolution><scan:YResolution>300</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>150</scan:XResolution><scan:YResolution>150</scan:YResolution></scan:DiscreteResolution>
        <scan:DiscreteResolution><scan:XResolution>600</scan:XResolution><scan:YResolution>600</scan:YResolution></scan:DiscreteResolution>
      </scan:DiscreteResolutions></scan:SupportedResolutions>
    </scan:SettingProfile></scan:SettingProfiles>
  </scan:PlatenInputCaps></scan:Platen>
  <scan:Adf><scan:AdfSimplexInputCaps><scan:MaxWidth>2550</scan:MaxWidth></scan:AdfSimplexInputCaps>
    <scan:AdfDuplexInputCaps><scan:MaxWidth>2550</scan:MaxWidth></scan:AdfDuplexInputCaps></scan:Adf>
</scan:ScannerCapabilities>`;

export async function startEsclServer(): Promise<EsclServer> {
  const state = { adf: 'ScannerAdfLoaded' };
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/eSCL/ScannerCapabilities') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(caps);
    } else if (req.method === 'GET' && req.url === '/eSCL/ScannerStatus') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>
<scan:ScannerStatus xmlns:scan="http://schemas.hp.com/imaging/escl/2011/05/03" xmlns:pwg="http://www.pwg.org/schemas/2010/12/sm">
  <pwg:Version>2.63</pwg:Version><pwg:State>Idle</pwg:State><scan:AdfState>${state.adf}</scan:AdfState>
</scan:ScannerStatus>`);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    uri: `escl:http://127.0.0.1:${port}/eSCL`,
    get adfState() { return state.adf; },
    set adfState(v: string) { state.adf = v; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
