// Test fixture: a private SANE_CONFIG_DIR that enables only the `test` backend, with an A4 scan
// area (its default stops at 200 mm; docs/printers-and-scanners.md, "Running the real peers").
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SaneTestConfig {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  close(): void;
}

export function saneTestConfig(extra: Record<string, string> = {}): SaneTestConfig {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-sane-'));
  const settings: Record<string, string> = { geometry_max: '300.0', br_x: '210.0', br_y: '297.0', ...extra };
  const lines = readFileSync('/etc/sane.d/test.conf', 'utf8')
    .split('\n')
    .map((l) => {
      const key = l.split(/\s+/)[0] ?? '';
      return key in settings ? `${key} ${settings[key]}` : l;
    });
  writeFileSync(join(dir, 'test.conf'), lines.join('\n'));
  // Only `test` in dll.conf: -L then skips probing USB and network backends (fast, hermetic).
  writeFileSync(join(dir, 'dll.conf'), 'test\n');
  return {
    dir,
    env: { ...process.env, SANE_CONFIG_DIR: dir },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
