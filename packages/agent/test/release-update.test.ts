// The box's side of an update without the service (docs/updates.md, "What a box does"): a
// download broken off mid-way resumes with a Range request where it stopped; a download that
// does not match the manifest is refused; a busy box switches only once its jobs are done.
// Real HTTP on loopback, real files, real tar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newReleaseKeys, sha256Hex, signManifest, type AgentUpdateParams } from '@boxhub/protocol/release.ts';
import { downloadRelease } from '../src/update/download.ts';
import { Updater } from '../src/update/updater.ts';

function tarball(version: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'release-'));
  mkdirSync(join(dir, 'package', 'bin'), { recursive: true });
  // Incompressible bytes, so the tarball is large enough to break off in the middle.
  writeFileSync(join(dir, 'package', 'bin', 'boxhub.mjs'), `// ${version}\n`);
  writeFileSync(join(dir, 'package', 'filler'), randomBytes(200_000));
  execFileSync('tar', ['-czf', join(dir, 'r.tgz'), '-C', dir, 'package']);
  const bytes = readFileSync(join(dir, 'r.tgz'));
  rmSync(dir, { recursive: true, force: true });
  return bytes;
}

/** Serves `bytes` with Range support; the first full GET is cut off after `cutAt` bytes. */
async function serve(bytes: Buffer, cutAt: number): Promise<{ server: Server; url: string; ranges: string[] }> {
  const ranges: string[] = [];
  let cut = false;
  const server = createServer((req: IncomingMessage, res) => {
    const range = req.headers.range;
    ranges.push(range ?? '');
    const m = /^bytes=(\d+)-$/.exec(range ?? '');
    if (m) {
      const from = Number(m[1]);
      res.writeHead(206, {
        'content-length': bytes.length - from,
        'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}`,
      });
      res.end(bytes.subarray(from));
      return;
    }
    res.writeHead(200, { 'content-length': bytes.length });
    if (!cut) {
      cut = true;
      res.write(bytes.subarray(0, cutAt), () => res.destroy());
      return;
    }
    res.end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/r.tgz`, ranges };
}

test('a download broken off mid-way resumes where it stopped and is checked against the manifest', async () => {
  const bytes = tarball('0.2.0');
  const { server, url, ranges } = await serve(bytes, 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'downloads-'));
  try {
    const path = await downloadRelease(url, dir, { size: bytes.length, sha256: sha256Hex(bytes) });
    assert.deepEqual(readFileSync(path), bytes);
    assert.equal(ranges[0], '', JSON.stringify(ranges));
    assert.match(ranges[1] ?? '', /^bytes=\d+-$/, `the second request asked for the rest: ${JSON.stringify(ranges)}`);
    assert.ok(Number(/\d+/.exec(ranges[1] ?? '')?.[0]) > 0);
    // Bytes that are not the manifest's: refused, and nothing kept.
    await assert.rejects(
      downloadRelease(url, join(dir, 'other'), { size: bytes.length, sha256: '0'.repeat(64) }),
      /does not match the manifest/,
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a busy box downloads and unpacks the release, and switches only once its jobs are done', async () => {
  const keys = newReleaseKeys();
  const bytes = tarball('0.2.0');
  const { server, url } = await serve(bytes, bytes.length);
  const stateDir = mkdtempSync(join(tmpdir(), 'box-'));
  let busy = true;
  let restarted = false;
  const logs: string[] = [];
  try {
    const updater = new Updater({
      stateDir,
      publicKey: keys.publicKey,
      version: '0.1.0',
      busy: () => busy,
      busyPollMs: 20,
      restart: () => {
        restarted = true;
      },
      changed: () => {},
      log: (m) => logs.push(m),
    });
    await updater.load();
    const manifest = {
      version: '0.2.0',
      platform: 'any',
      size: bytes.length,
      sha256: sha256Hex(bytes),
      entry: 'package/bin/boxhub.mjs',
    };
    const p: AgentUpdateParams = { release: 'r1', url, manifest, signature: signManifest(keys.privateKey, manifest) };
    assert.deepEqual(await updater.accept(p), { ok: true });
    const running = updater.run(p);
    // Unpacked beside the running release while the box is busy; not switched to.
    const unpacked = join(stateDir, 'releases', '0.2.0', 'package', 'bin', 'boxhub.mjs');
    for (let i = 0; i < 500 && !logs.length && !readable(unpacked); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(readFileSync(unpacked, 'utf8'), '// 0.2.0\n');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(restarted, false, 'no switch while a job runs');
    assert.throws(() => readlinkSync(join(stateDir, 'releases', 'current')));
    assert.equal(updater.lastReport?.outcome, 'installing');
    busy = false;
    await running;
    assert.equal(restarted, true);
    assert.equal(readlinkSync(join(stateDir, 'releases', 'current')), '0.2.0');
    assert.deepEqual(JSON.parse(readFileSync(join(stateDir, 'releases', 'trial.json'), 'utf8')), {
      release: 'r1',
      to: '0.2.0',
      from: null,
      starts: 0,
      started_at: 0,
    });
  } finally {
    server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test('once a release proves healthy, the box keeps it and the one it came from, and removes older ones', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'box-'));
  const releases = join(stateDir, 'releases');
  try {
    for (const v of ['0.1.0', '0.2.0', '0.3.0', 'downloads']) mkdirSync(join(releases, v), { recursive: true });
    writeFileSync(join(releases, 'downloads', 'r9.part'), 'partial');
    symlinkSync('0.3.0', join(releases, 'current'));
    writeFileSync(
      join(releases, 'trial.json'),
      JSON.stringify({ release: 'r3', to: '0.3.0', from: '0.2.0', starts: 1, started_at: 1 }),
    );
    const updater = new Updater({
      stateDir,
      publicKey: newReleaseKeys().publicKey,
      version: '0.3.0',
      busy: () => false,
      restart: () => {},
      changed: () => {},
      log: () => {},
    });
    await updater.load();
    await updater.healthy();
    assert.equal(updater.lastReport?.outcome, 'updated');
    assert.deepEqual(readdirSync(releases).sort(), ['0.2.0', '0.3.0', 'current', 'downloads', 'result.json']);
    assert.equal(readFileSync(join(releases, 'downloads', 'r9.part'), 'utf8'), 'partial', 'a partial download stays');
    assert.equal(readlinkSync(join(releases, 'current')), '0.3.0');
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

test('the checks before the answer: unsigned, signed by another key, another platform, older, the same, no key', () => {
  const keys = newReleaseKeys();
  const other = newReleaseKeys();
  const box = (publicKey: string | undefined) =>
    new Updater({
      stateDir: tmpdir(),
      publicKey,
      version: '1.2.0',
      busy: () => false,
      restart: () => {},
      changed: () => {},
      log: () => {},
    });
  const manifest = (version: string, platform = 'any') => ({
    version,
    platform,
    size: 10,
    sha256: 'a'.repeat(64),
    entry: 'package/bin/boxhub.mjs',
  });
  const params = (
    m: ReturnType<typeof manifest>,
    key = keys.privateKey,
    o: { downgrade?: boolean } = {},
  ): AgentUpdateParams => ({
    release: 'r',
    url: 'http://127.0.0.1:1/r.tgz',
    manifest: m,
    signature: signManifest(key, m),
    ...o,
  });
  const why = (v: { ok: true } | { ok: false; reason: string }) => (v.ok ? 'ok' : v.reason);
  const u = box(keys.publicKey);
  assert.equal(why(u.check(params(manifest('1.3.0')))), 'ok');
  assert.match(why(u.check({ ...params(manifest('1.3.0')), signature: '' })), /not signed by this box's release key/);
  assert.match(why(u.check(params(manifest('1.3.0'), other.privateKey))), /not signed by this box's release key/);
  // A signature of another manifest (the version changed after signing).
  assert.match(why(u.check({ ...params(manifest('1.3.0')), manifest: manifest('1.4.0') })), /not signed/);
  assert.match(why(u.check(params(manifest('1.3.0', 'win32-ia32')))), /for win32-ia32, this box is/);
  assert.match(why(u.check(params(manifest('1.1.9')))), /older than 1\.2\.0/);
  assert.equal(why(u.check(params(manifest('1.1.9'), keys.privateKey, { downgrade: true }))), 'ok');
  assert.match(why(u.check(params(manifest('1.2')))), /runs already/);
  assert.match(why(box(undefined).check(params(manifest('1.3.0')))), /no release key/);
});
