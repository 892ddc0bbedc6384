// Test fixture: Debian's sane-airscan (an eSCL client nobody here wrote) pointed at eSCL
// servers through a private SANE_CONFIG_DIR: dll.conf enables only `airscan`, airscan.conf
// lists the devices statically and turns DNS-SD and WS-Discovery off, so scanimage finds
// exactly these and never touches /etc/sane.d (design: "Real print and scan stacks on a box").
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Airscan {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  /** scanimage with these arguments (asynchronous: the eSCL server may live in this process). */
  scanimage(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): void;
}

/** `devices`: name → eSCL base URL (http://127.0.0.1:PORT/eSCL). */
export function airscanConfig(devices: Record<string, string>): Airscan {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-airscan-'));
  writeFileSync(join(dir, 'dll.conf'), 'airscan\n');
  const lines = Object.entries(devices).map(([name, url]) => `"${name}" = ${url}, eSCL`);
  writeFileSync(join(dir, 'airscan.conf'), `[devices]\n${lines.join('\n')}\n\n[options]\ndiscovery = disable\n`);
  const env = { ...process.env, SANE_CONFIG_DIR: dir };
  return {
    dir,
    env,
    async scanimage(args) {
      try {
        const r = await run('scanimage', args, { env, timeout: 120_000, maxBuffer: 64 << 20 });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (e) {
        const x = e as { code?: number; stdout?: string; stderr?: string };
        return {
          code: typeof x.code === 'number' ? x.code : -1,
          stdout: x.stdout ?? '',
          stderr: x.stderr ?? String(e),
        };
      }
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
