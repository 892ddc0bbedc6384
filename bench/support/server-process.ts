// The server under test, in its own process (forked by a bench with an IPC channel), so the
// load generator and the simulated boxes never share its event loop or its heap.
//
//   argv[2] = 'boxhub': the real server via startServer(loadConfig(env)), logging at the
//             configured level (LOG_LEVEL, default info) to stdout like production.
//   argv[2] = 'bare':   a bare node:http server answering BENCH_BODY (the same JSON bytes as
//             the real /api/client/info answer) to every request.
//
// Protocol (process.send / process.on('message')): the child first sends
// { ready: true, url, mqttUrl? }; then each request { id, op, ... } gets { id, result } or
// { id, error }. Run with --expose-gc for the 'mem' op to collect garbage before measuring.
import { createServer } from 'node:http';
import { loadConfig, startServer, type RunningServer } from '@boxhub/server';
import { traceEverySecond } from './trace.ts';

type Request = { id: number; op: string; [k: string]: unknown };

const mode = process.argv[2];
if (!process.send) throw new Error('server-process.ts must be forked with an IPC channel');
const send = (m: unknown) => process.send!(m);

function memory() {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Several passes: weak references and finalisers free more on the second and third.
  if (gc) for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return {
    gc: !!gc,
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

/**
 * BENCH_TRACE=<file>: what the node did, a line a second (trace.ts): its broker's connections and
 * the boxes online in the database.
 */
function trace(file: string, running: RunningServer, online: Map<string, number>): void {
  const broker = running.broker as { connectedClients?: number };
  traceEverySecond(file, () => [`connections ${broker.connectedClients ?? -1}`, `online ${online.size}`]);
}

async function main(): Promise<void> {
  let running: RunningServer | undefined;
  /** Boxes online in the database and when their session began (Unix ms); see below. */
  const connectedAt = new Map<string, number>();
  let close: () => Promise<void>;
  if (mode === 'bare') {
    const body = Buffer.from(process.env.BENCH_BODY ?? '{"code":0,"msg":"ok","data":null}');
    // Same headers a Fastify JSON reply carries (content-type with charset, content-length).
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    send({ ready: true, url: `http://127.0.0.1:${port}` });
    close = () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
  } else if (mode === 'boxhub') {
    // Everything from the environment the bench passes (PORT=0, HOST, BOXHUB_MQTT_PORT=0,
    // BOXHUB_DATA_DIR); LOG_LEVEL is left to its default unless the caller sets it.
    running = await startServer(loadConfig(process.env));
    // Which boxes the database has online, and since when, kept as the gateway applies their
    // presence: counting them with a query on every poll scanned the 10,000 device rows on the
    // server's own thread (about 110 ms a time during a storm) and so stalled what the bench
    // measures. The listener first, then the rows already online, so no box is missed.
    running.gateway.onPresence(async (uuid, online) => {
      if (online) connectedAt.set(uuid, Date.now());
      else connectedAt.delete(uuid);
    });
    for (const r of await running.db.kysely
      .selectFrom('devices')
      .select(['uuid', 'last_connect_at'])
      .where('online', '=', 1)
      .execute())
      if (!connectedAt.has(r.uuid)) connectedAt.set(r.uuid, Number(r.last_connect_at ?? 0));
    send({ ready: true, url: running.url, mqttUrl: running.mqttUrl });
    if (process.env.BENCH_TRACE) trace(process.env.BENCH_TRACE, running, connectedAt);
    close = () => running!.close();
  } else {
    throw new Error(`unknown mode '${mode}' (bare | boxhub)`);
  }

  const handle = async (req: Request): Promise<unknown> => {
    switch (req.op) {
      case 'mem':
        return memory();
      case 'cpu':
        return process.cpuUsage();
      // Resident memory now and its high-water mark since the process started (bytes).
      case 'rss':
        return { rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 };
      case 'createApp': {
        if (!running) throw new Error('no boxhub server');
        const a = await running.services.applications.create({
          name: String(req.name ?? 'bench'),
          ess: req.ess === true,
        });
        return { id: a.id, api_key: a.api_key, callback_secret: a.callback_secret };
      }
      case 'register': {
        // Provisions n boxes (database row + broker login), as an operator would.
        if (!running) throw new Error('no boxhub server');
        const n = Number(req.n ?? 1);
        const out: { uuid: string; secret: string }[] = [];
        for (let i = 0; i < n; i++) {
          const d = await running.registerDevice({
            code: `BENCH${String(i).padStart(6, '0')}${Math.random().toString(36).slice(2, 8).toUpperCase()}`,
            model: 'BX-SIM',
          });
          out.push({ uuid: d.uuid, secret: d.secret });
        }
        return out;
      }
      case 'online': {
        // Boxes the broker holds a connection for (embedded broker only).
        if (!running) throw new Error('no boxhub server');
        const b = running.broker as { connectedClients?: number };
        return b.connectedClients ?? -1;
      }
      case 'onlineInDb': {
        // Boxes the database says are online (presence applied), whatever the broker.
        if (!running) throw new Error('no boxhub server');
        return connectedAt.size;
      }
      case 'reconnectedSince': {
        // Boxes whose new session the database has: online, connected at or after `at` (Unix ms).
        if (!running) throw new Error('no boxhub server');
        let n = 0;
        for (const t of connectedAt.values()) if (t >= Number(req.at)) n++;
        return n;
      }
      case 'pendingJobs': {
        // Rows of the jobs table of one kind still to run (done jobs are deleted).
        if (!running) throw new Error('no boxhub server');
        const r = await running.db.kysely
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('kind', '=', String(req.kind))
          .executeTakeFirstOrThrow();
        return { rows: Number(r.n) };
      }
      case 'close': {
        await close();
        setImmediate(() => process.exit(0));
        return true;
      }
      default:
        throw new Error(`unknown op '${req.op}'`);
    }
  };

  process.on('message', (raw) => {
    const req = raw as Request;
    handle(req).then(
      (result) => send({ id: req.id, result }),
      (e: unknown) => send({ id: req.id, error: (e as Error).stack ?? String(e) }),
    );
  });
  // The bench went away (crash, Ctrl-C): do not linger.
  process.on('disconnect', () => {
    void close().finally(() => process.exit(0));
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
