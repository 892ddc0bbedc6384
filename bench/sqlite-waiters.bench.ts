// Statements waiting for SQLite's one connection (docs/architecture.md, "Kysely"): Kysely's own
// SqliteDialect against boxhub's FifoSqliteDialect (db/fifo-sqlite-dialect.ts), side by side in
// one run. Each round issues BENCH_WAITERS single-row inserts at once, as a fleet's return does
// (a presence, a state and their checks per box), plus one transaction of 50 inserts per 100 of
// them; the figure is the wall time until all have landed. No target: the ratio is why the
// dialect exists. An in-memory database, so the figures are the driver's, not the disk's.
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { FifoSqliteDialect } from '@boxhub/server/db/fifo-sqlite-dialect.ts';
import { header, median } from './support/child.ts';

const WAITERS = (process.env.BENCH_WAITERS ?? '1000,4000,8000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

type Db = Kysely<{ t: { id: number | undefined; v: string } }>;

async function round(db: Db, n: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all([
    ...Array.from({ length: n }, (_, i) =>
      db
        .insertInto('t')
        .values({ id: undefined, v: String(i) })
        .execute(),
    ),
    ...Array.from({ length: n / 100 }, () =>
      db.transaction().execute(async (trx) => {
        for (let i = 0; i < 50; i++) await trx.insertInto('t').values({ id: undefined, v: 'trx' }).execute();
      }),
    ),
  ]);
  return performance.now() - t0;
}

header('SQLite waiters: Kysely SqliteDialect vs FifoSqliteDialect', [
  `rounds of N single inserts issued at once plus N/100 transactions of 50; median of ${ROUNDS} rounds each, the two dialects alternating`,
]);
const dbs = {
  kysely: new Kysely({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) }) as Db,
  fifo: new Kysely({ dialect: new FifoSqliteDialect({ database: new SQLite(':memory:') }) }) as Db,
};
for (const db of Object.values(dbs)) await sql`create table t (id integer primary key, v text not null)`.execute(db);
for (const n of WAITERS) {
  const times = { kysely: [] as number[], fifo: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    times.kysely.push(await round(dbs.kysely, n));
    times.fifo.push(await round(dbs.fifo, n));
  }
  const k = median(times.kysely);
  const f = median(times.fifo);
  console.log(
    `N ${n}: Kysely's dialect ${k.toFixed(0)} ms, FIFO dialect ${f.toFixed(0)} ms, ratio ${(k / f).toFixed(1)}×`,
  );
}
for (const db of Object.values(dbs)) await db.destroy();
