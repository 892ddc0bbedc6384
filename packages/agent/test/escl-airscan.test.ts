// The test eSCL server checked against sane-airscan's scanimage, an independent eSCL client
// (Debian's sane-airscan): flatbed, feeder one-sided and two-sided, colour and grey, at each
// resolution the server lists. What airscan asks for (ScanSettings) and what it makes of the
// answer (pages, their size in pixels, channels) must both be right, or the fake does not speak
// eSCL as devices do (docs/printers-and-scanners.md, "eSCL scanners").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { airscanConfig, type Airscan } from './airscan.ts';
import { startEsclServer, type EsclServer } from './escl-server.ts';
import { saneTestConfig, type SaneTestConfig } from './sane.ts';

const DEVICE = 'airscan:e0:Boxhub Mock';
// A small region keeps 600 dpi colour quick; 20 mm is 236 px at 300 dpi.
const MM = 20;

let sane: SaneTestConfig;
let server: EsclServer;
let air: Airscan;
before(async () => {
  sane = saneTestConfig();
  server = await startEsclServer({ sane });
  air = airscanConfig({ 'Boxhub Mock': server.uri.slice('escl:'.length) });
});
after(async () => {
  air?.close();
  await server?.close();
  sane?.close();
});

test('scanimage -L finds it; -A shows its sources, modes and resolutions as airscan understood them', async () => {
  const list = await air.scanimage(['-L']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /device `airscan:e0:Boxhub Mock' is a eSCL Boxhub Mock ip=127.0.0.1/);
  const all = await air.scanimage(['-d', DEVICE, '-A']);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /--source Flatbed\|ADF\|ADF Duplex/);
  assert.match(all.stdout, /--mode Color\|Gray/);
  assert.match(all.stdout, /--resolution 150\|300\|600dpi/);
});

const sources = [
  { source: 'Flatbed', input: 'Platen', duplex: undefined, pages: 1 },
  { source: 'ADF', input: 'Feeder', duplex: 'false', pages: 2 },
  { source: 'ADF Duplex', input: 'Feeder', duplex: 'true', pages: 4 },
] as const;

for (const s of sources) {
  describe(`${s.source}`, () => {
    for (const mode of ['Color', 'Gray'] as const) {
      for (const dpi of [150, 300, 600]) {
        test(`${mode} at ${dpi} dpi`, async () => {
          server.sheets = 2;
          const dir = mkdtempSync(join(tmpdir(), 'boxhub-airscan-out-'));
          try {
            const r = await air.scanimage([
              '-d',
              DEVICE,
              '--source',
              s.source,
              '--mode',
              mode,
              '--resolution',
              String(dpi),
              '-x',
              String(MM),
              '-y',
              String(MM),
              '--format=png',
              `--batch=${join(dir, 'p%d.png')}`,
              ...(s.source === 'Flatbed' ? ['--batch-count=1'] : []),
            ]);
            // scanimage ends a feeder batch with "out of documents" and exit 0 when it got pages.
            assert.equal(r.code, 0, r.stderr);
            const files = readdirSync(dir).sort();
            assert.equal(files.length, s.pages, `${files.join(', ')}\n${r.stderr}`);
            const job = server.jobs.at(-1)!;
            assert.equal(job.settings.InputSource, s.input);
            assert.equal(job.settings.Duplex, s.duplex);
            assert.equal(job.settings.ColorMode, mode === 'Color' ? 'RGB24' : 'Grayscale8');
            assert.deepEqual([job.settings.XResolution, job.settings.YResolution], [String(dpi), String(dpi)]);
            assert.equal(job.pages, s.pages);
            const px = Math.round((MM / 25.4) * dpi);
            for (const f of files) {
              const meta = await sharp(join(dir, f)).metadata();
              assert.ok(
                Math.abs(meta.width! - px) <= 1 && Math.abs(meta.height! - px) <= 1,
                `${f}: ${meta.width}x${meta.height}, expected ${px}`,
              );
              assert.equal(meta.channels, mode === 'Color' ? 3 : 1, f);
            }
            // The job ended on the server as a finished job, not a half-open one.
            assert.notEqual(job.state, 'Processing');
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        });
      }
    }
  });
}
