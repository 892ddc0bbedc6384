// `boxhub card run --device DEVICE --template ID`: the whole feedback-card flow from the command
// line (docs/cards.md, section 10). Listens for the recognition callbacks itself, creates a
// recognition task, starts a scan on the box with direct transfer to the task's address, and
// prints each student's result as it arrives; ends with the PUT end callback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { common, defineCommand, intFlag } from '../command.ts';
import { connect, connectionFlags, deviceUuid, secretFrom } from '../connection.ts';
import { EXIT, messageOf, UsageError } from '../exit.ts';
import { Interrupt, Progress } from '../progress.ts';
import { studentLine, type StudentResultLike } from './card-text.ts';

interface Callback extends StudentResultLike {
  uuid: string;
  finish: boolean;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > 4 * 1024 * 1024) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const RESOLUTIONS = [100, 150, 200, 240, 300, 400, 600, 1200] as const;
const isResolution = (n: number): n is (typeof RESOLUTIONS)[number] => RESOLUTIONS.some((r) => r === n);

export const command = defineCommand({
  summary: "scan a class's cards on a box and print each student's result as it comes",
  usage: '--device DEVICE --template ID [options]',
  description:
    'Creates a recognition task, starts a direct-transfer scan to it on the box and receives the\nresult callbacks itself: one line per student on stdout, in scan order, then the end.\nCtrl-C stops the scan; the results of what was scanned still come (exit 130).',
  flags: {
    device: common.device,
    template: {
      type: 'string',
      arg: 'ID',
      required: true,
      help: 'a card template of this application (checked before the scan starts)',
    },
    listen: {
      type: 'string',
      arg: 'HOST:PORT',
      help: 'where this command receives the callbacks (default 127.0.0.1:0)',
    },
    'callback-url': {
      type: 'string',
      arg: 'URL',
      help: 'the address the service reaches that listener at (default\nhttp://HOST:PORT/results of --listen)',
    },
    'callback-secret-file': {
      type: 'string',
      arg: 'FILE',
      help: "file holding the application's whsec_ callback secret: callbacks are\nverified (default $BOXHUB_CALLBACK_SECRET; without either they are not)",
    },
    resolution: { type: 'string', arg: 'N', help: 'dpi: 100, 150, 200 (default), 240, 300, 400, 600, 1200' },
    duplex: { type: 'boolean', help: 'both sides of each card (the default)' },
    simplex: { type: 'boolean', help: 'one side only' },
    timeout: {
      ...common.timeout,
      help: 'give up after SEC seconds: the scan is stopped, exit 1 (default: wait\nfor the end of the recognition)',
    },
    ...connectionFlags,
    json: common.json,
  },
  json: 'one JSON object per line: {"event":"started",…}, {"event":"student","body":<callback>} each, {"event":"end",…}',
  examples: [
    'boxhub card run --device BX0042 --template $TEMPLATE',
    'BOXHUB_CALLBACK_SECRET=whsec_… boxhub card run --device BX0042 --template $TEMPLATE --json > results.ndjson',
    'boxhub card run --device BX0042 --template $TEMPLATE --listen 0.0.0.0:8099 --callback-url https://me.example.org/results',
  ],
  async run(ctx) {
    const values = ctx.values;
    if (values.duplex && values.simplex) throw new UsageError('--duplex and --simplex are exclusive');
    const resolution = values.resolution === undefined ? 200 : Number(values.resolution);
    if (!isResolution(resolution))
      throw new UsageError(`--resolution must be one of ${RESOLUTIONS.join(', ')}, not '${values.resolution}'`);
    const timeout = intFlag('timeout', values.timeout, 1, 7 * 86400);
    const [host, portText] = (values.listen ?? '127.0.0.1:0').split(/:(?=\d+$)/);
    const port = Number(portText ?? 0);
    if (!host || !Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--listen HOST:PORT, not '${values.listen}'`);
    const secret = secretFrom(values['callback-secret-file'], '--callback-secret-file', 'BOXHUB_CALLBACK_SECRET');
    const { CallbackReceiver, InvalidCallbackError } = await import('@boxhub/sdk');
    const verifier = secret ? new CallbackReceiver({ secrets: secret }) : undefined;
    const json = ctx.json;
    const boxhub = await connect(ctx);
    const progress = new Progress({ json });
    const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);

    let done: (code: number) => void = () => undefined;
    const finished = new Promise<number>((r) => {
      done = r;
    });
    const seen = new Set<string>();
    let students = 0;
    let failed = 0;
    let pages = 0;
    let interrupt: Interrupt | undefined;
    const state = () =>
      `scanned ${pages} page${pages === 1 ? '' : 's'}; ${students} student${students === 1 ? '' : 's'} read${failed ? `, ${failed} failed` : ''}`;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void readBody(req)
        .then((body) => {
          if (verifier) {
            try {
              verifier.verify({ headers: req.headers, body });
            } catch (e) {
              if (e instanceof InvalidCallbackError) {
                res.writeHead(400).end();
                progress.line(`refused a callback: ${e.message}`);
                return;
              }
              throw e;
            }
          }
          res.writeHead(200).end();
          const id = String(req.headers['x-svc-callback-id'] ?? '');
          if (id && seen.has(id)) return; // a retry of one already shown
          if (id) seen.add(id);
          const parsed = JSON.parse(body) as Callback;
          if (req.method === 'PUT') {
            progress.clear();
            // The end's body has an error_code only when the recognition as a whole failed.
            const endCode = parsed.error_code ?? 0;
            const code = interrupt?.interrupted
              ? EXIT.interrupted
              : failed > 0 || endCode !== 0
                ? EXIT.failed
                : EXIT.ok;
            if (json)
              out({
                event: 'end',
                body: parsed,
                students,
                failed,
                interrupted: interrupt?.interrupted ?? false,
                timed_out: false,
              });
            else
              process.stdout.write(
                `recognition ${parsed.uuid} ended: ${students} student(s), ${failed} failed${endCode ? ` (error ${endCode})` : ''}\n`,
              );
            done(code);
            return;
          }
          students++;
          if (parsed.error_code !== 0) failed++;
          if (json) out({ event: 'student', body: parsed });
          else {
            // The result goes to stdout under the progress line, which is drawn again below it.
            progress.clear();
            process.stdout.write(`${studentLine(parsed)}\n`);
          }
          progress.status(state());
        })
        .catch((e: unknown) => {
          if (!res.headersSent) res.writeHead(500).end();
          progress.line(`callback not handled: ${messageOf(e)}`);
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(new UsageError(`--listen ${host}:${port}: ${e.code ?? e.message}`)),
      );
      server.listen(port, host, () => resolve());
    });
    const polling = new AbortController();
    try {
      const addr = server.address();
      if (addr === null || typeof addr === 'string')
        throw new Error(`the callback listener on ${host}:${port} has no TCP address`);
      const callbackUrl =
        values['callback-url'] ?? `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}/results`;
      const client_uuid = await deviceUuid(boxhub, values.device);
      const template = await boxhub.recognition.templateInfo({ template_id: values.template });
      progress.status('starting the scan…');
      const { task, scan } = await boxhub.recognition.scanAndRecognize(client_uuid, callbackUrl, {
        resolution,
        ...(values.simplex ? { duplex: false } : {}),
      });
      progress.line(
        `card ${template.card_id} (template ${template.template_id}); recognition ${task.uuid}; scan ${scan.uuid} on ${client_uuid}; results to ${callbackUrl}`,
      );
      if (json)
        out({
          event: 'started',
          recognition_uuid: task.uuid,
          scan_uuid: scan.uuid,
          client_uuid,
          card_id: template.card_id,
          template_id: template.template_id,
          callback_url: callbackUrl,
        });
      const stopScan = () => boxhub.scan.stop({ client_uuid }).catch(() => undefined);
      interrupt = new Interrupt(() => {
        progress.line('stopping the scan… (the results of what was scanned still come; Ctrl-C again exits at once)');
        void stopScan();
      });
      // The scan's page count, for the progress line (the results come by callback, not from here).
      void boxhub.scan
        .waitForFinish(
          { client_uuid, scan_uuid: scan.uuid! },
          {
            intervalMs: 1000,
            signal: polling.signal,
            onProgress: (i) => {
              pages = i.total_pages;
              progress.status(i.finished ? `${state()}; scan done, reading the last cards…` : state());
            },
          },
        )
        .catch(() => undefined);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<number>((resolve) => {
        if (timeout !== undefined) {
          timer = setTimeout(() => {
            void stopScan().then(() => {
              progress.clear();
              progress.line(`no end after ${timeout} s: the scan was stopped`);
              if (json) out({ event: 'end', body: null, students, failed, interrupted: false, timed_out: true });
              else
                process.stdout.write(
                  `recognition ${task.uuid} timed out after ${timeout} s: ${students} student(s), ${failed} failed\n`,
                );
              resolve(EXIT.failed);
            });
          }, timeout * 1000);
        }
      });
      try {
        return await Promise.race([finished, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      polling.abort();
      interrupt?.dispose();
      progress.clear();
      server.close();
    }
  },
});
