// A real server process for the crash test (callbacks-restart.test.ts): configuration from the
// environment, a data dir that survives it. On first start it creates an application and
// writes its credentials to BOXHUB_TEST_APP_FILE; then it prints one JSON line with its URL.
// With BOXHUB_TEST_CLOCK=<Unix ms> its clock is a ManualClock starting there, moved by lines
// `advance <ms>` on stdin; each is answered with a line {"now": <ms>} once the job runner is
// quiet, so a test across a SIGKILL still sees exact times.
// Run: node --import tsx packages/server/src/testing/callback-node.ts
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadConfig } from '../config.ts';
import { startServer } from '../server.ts';
import { ManualClock } from './manual-clock.ts';

// BOXHUB_TEST_PG_SCHEMA: the PostgreSQL schema to work in (the PostgreSQL test pass).
const pgSchema = process.env.BOXHUB_TEST_PG_SCHEMA;
const clockStart = process.env.BOXHUB_TEST_CLOCK;
const clock = clockStart ? new ManualClock(Number(clockStart)) : undefined;
const server = await startServer(loadConfig(process.env), {
  ...(pgSchema ? { pgSchema } : {}),
  ...(clock ? { clock } : {}),
});
const file = process.env.BOXHUB_TEST_APP_FILE;
let app: unknown;
if (file) {
  if (existsSync(file)) app = JSON.parse(readFileSync(file, 'utf8'));
  else {
    app = await server.services.applications.create({ name: 'crash-test' });
    writeFileSync(file, JSON.stringify(app));
  }
}
process.stdout.write(`${JSON.stringify({ ready: true, url: server.url, app })}\n`);
if (clock) {
  createInterface({ input: process.stdin }).on('line', (line) => {
    const m = /^advance (\d+)$/.exec(line.trim());
    if (!m) return;
    void (async () => {
      await clock.advance(Number(m[1]));
      await server.jobRunner.quiet();
      process.stdout.write(`${JSON.stringify({ now: clock.now() })}\n`);
    })();
  });
}
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
