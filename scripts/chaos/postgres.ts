// A private PostgreSQL cluster in a temp dir on a free port, so that "restart PostgreSQL" never
// touches the machine's shared one: initdb from the installed binaries, pg_ctl to start, stop
// (immediate: a crash) and start again on the same port and data.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { freePort } from './ports.ts';

export interface Postgres {
  url: string;
  restart(downMs: number): Promise<void>;
  stop(): void;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  const v = versions[0];
  if (!v) throw new Error('no PostgreSQL under /usr/lib/postgresql (Debian: postgresql)');
  return `/usr/lib/postgresql/${v}/bin`;
}

export async function startPostgres(dir: string): Promise<Postgres> {
  const bin = binDir();
  const data = join(dir, 'pgdata');
  mkdirSync(data, { recursive: true });
  // PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user.
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chmodSync(dirname(dir), 0o755); // mkdtemp makes it 0700: the postgres user must get through
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args,
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-o', opts, '-w', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(downMs) {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      await new Promise((r) => setTimeout(r, downMs));
      start();
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        /* not running */
      }
    },
  };
}
