// `boxhub agent`: the program on the box. Connects out to the server's broker and drives the
// printer and scanner named by URI (sim:, ipp://, ipps://, cups:, auto; sim:, sane:, escl:, auto).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pdfEnginesLine } from '@boxhub/pdf-tools/pdf-engines.ts';
import { defineCommand, intFlag } from '../command.ts';
import { secretFrom } from '../connection.ts';
import { errnoCode, EXIT, Failed, messageOf, UsageError } from '../exit.ts';

/** Exit status when the broker definitively refuses the box's credentials (docs/box-agent.service):
 *  the CLI's "credentials refused" (exit.ts). */
export const EXIT_CREDENTIALS_REFUSED = EXIT.unreachable;

function readKey(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--release-key: cannot read ${file} (${errnoCode(e) ?? messageOf(e)})`);
  }
}

export const command = defineCommand({
  summary: 'run the box agent: the program on the box',
  usage: '--server mqtt://HOST:PORT --device UUID [options]',
  description:
    "Connects out to the service's box link and drives the printer and scanner named by URI. It\nkeeps running through any outage (server or broker restart, network cut, session taken over,\nnothing listening yet) and reconnects with backoff and jitter. It exits only on SIGINT/SIGTERM\n(exit 0) or when the broker refuses its credentials (exit 3). The secret comes from\n--secret-file or $BOXHUB_AGENT_SECRET (docs/box-protocol.md, docs/box-agent.service).",
  flags: {
    server: {
      type: 'string',
      arg: 'URL',
      required: true,
      help: "the service's box link: mqtt://HOST:PORT or mqtts://HOST:PORT",
    },
    device: { type: 'string', arg: 'UUID', required: true, help: "this box's uuid (boxhub device register prints it)" },
    'secret-file': {
      type: 'string',
      arg: 'FILE',
      help: "file holding the box's secret (default $BOXHUB_AGENT_SECRET)",
    },
    printer: {
      type: 'string',
      arg: 'URI',
      help: 'sim:, ipp://host:631/ipp/print, ipps://…, a CUPS queue (cups:NAME or\nipp://localhost:631/printers/NAME), auto (what is attached; the log says\nwhat it chose), none (default none)',
    },
    scanner: {
      type: 'string',
      arg: 'URI',
      help: 'sim:, sane:DEVICE, escl:http://host/eSCL, auto (what is attached; the log\nsays what it chose), none (default none)',
    },
    keepalive: { type: 'string', arg: 'SEC', help: 'MQTT keepalive, 5-300 (default 30)' },
    'reconnect-max': {
      type: 'string',
      arg: 'SEC',
      help: 'longest wait between reconnection attempts, 1-600 (default 20)',
    },
    'state-dir': {
      type: 'string',
      arg: 'DIR',
      help: "the box's own disk: job journal, outbox of events, scan items\n(default $STATE_DIRECTORY under systemd, else ~/.boxhub-agent)",
    },
    'buzzer-cmd': {
      type: 'string',
      arg: 'CMD',
      help: 'command per beep, {ms} is replaced by the duration (default: simulated)',
    },
    'reboot-cmd': { type: 'string', arg: 'CMD', help: 'command that reboots the box (default: systemctl reboot)' },
    model: { type: 'string', arg: 'NAME', help: 'box model reported to the server (default BX-1)' },
    'release-key': {
      type: 'string',
      arg: 'FILE',
      help: "the operator's release public key (PEM): updates signed with its key are\ntaken, others refused; without it the box takes no updates (docs/updates.md)",
    },
    uuid: { type: 'string', arg: 'UUID', help: '', deprecatedFor: 'device' },
  },
  examples: [
    'BOXHUB_AGENT_SECRET=… boxhub agent --server mqtts://boxhub.example.org:8883 --device $UUID --printer ipp://localhost:631/ipp/print --scanner sane:',
    'boxhub agent --server mqtt://127.0.0.1:1883 --device $UUID --secret-file secret --printer sim: --scanner sim:',
    'boxhub agent --server mqtts://boxhub.example.org:8883 --device $UUID --secret-file secret --printer auto --scanner auto',
  ],
  async run(ctx) {
    const values = ctx.values;
    const secret = secretFrom(values['secret-file'], '--secret-file', 'BOXHUB_AGENT_SECRET');
    if (!secret) throw new UsageError("the box's secret is needed: --secret-file FILE or BOXHUB_AGENT_SECRET");
    const keepalive = intFlag('keepalive', values.keepalive, 5, 300) ?? 30;
    const reconnectMax = intFlag('reconnect-max', values['reconnect-max'], 1, 600) ?? 20; // the link's DEFAULT_RECONNECT_MAX_MS (docs/box-protocol.md)
    const rebootCmd = (values['reboot-cmd'] ?? 'systemctl reboot').split(/\s+/).filter(Boolean);
    const server = values.server;
    const uuid = values.device;
    const {
      BoxAgent,
      EXIT_SWITCH,
      CommandBuzzer,
      SimBuzzer,
      createPrinterDriver,
      createScannerDriver,
      readNetworkInfo,
      systemdSupervisor,
    } = await import('@boxhub/agent');
    const stateDir =
      values['state-dir'] ?? process.env.STATE_DIRECTORY?.split(':')[0] ?? join(homedir(), '.boxhub-agent');
    const log = (msg: string, extra?: Record<string, unknown>) =>
      process.stderr.write(`${new Date().toISOString()} ${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}\n`);
    // The state directory is made (and its journal opened) first: a box that cannot keep its
    // work says so and exits 1 instead of running without a disk (docs/box-protocol.md).
    const notWritable = (e: unknown): unknown => {
      const code = errnoCode(e);
      if (code && /^(EACCES|EPERM|EROFS|ENOTDIR|EEXIST|ENOSPC|EDQUOT|ELOOP|ENAMETOOLONG)$/.test(code)) {
        return new Failed(
          `cannot start: the state directory ${stateDir} cannot be created or written (${code}): set --state-dir (or STATE_DIRECTORY) to a directory this user can write`,
        );
      }
      return e;
    };
    const releaseKey = values['release-key'] ? readKey(values['release-key']) : undefined;
    // After a switch to another release the agent stops and exits EXIT_SWITCH for the launcher.
    let switched: () => void = () => {};
    let agent: InstanceType<typeof BoxAgent>;
    try {
      agent = new BoxAgent({
        link: {
          url: server,
          uuid,
          secret,
          keepaliveSec: keepalive,
          backoff: { baseMs: Math.min(1000, reconnectMax * 1000), maxMs: reconnectMax * 1000 },
        },
        printer: await createPrinterDriver(values.printer, { log }),
        scanner: await createScannerDriver(values.scanner, { log }),
        buzzer: values['buzzer-cmd'] ? new CommandBuzzer(values['buzzer-cmd']) : new SimBuzzer(),
        // The launcher names the release it started (docs/updates.md); the installed agent is 0.1.0.
        identity: {
          model: values.model ?? 'BX-1',
          version: process.env.BOXHUB_RELEASE_VERSION ?? '0.1.0',
          firmware: process.env.BOXHUB_FIRMWARE ?? 'unknown',
        },
        update: { publicKey: releaseKey, restart: () => switched() },
        network: readNetworkInfo,
        stateDir,
        reboot: async () => {
          const [bin, ...args] = rebootCmd;
          if (bin)
            execFile(bin, args, (err) => {
              if (err) log('reboot failed', { error: err.message });
            });
        },
        log,
      });
    } catch (e) {
      throw notWritable(e);
    }
    const supervisor = systemdSupervisor(process.env, log);
    log(pdfEnginesLine());
    agent.link.on('connected', () => log('connected', { server }));
    agent.link.on('disconnected', (reason) => log('disconnected', { reason, reconnecting: !agent.link.refusal }));
    try {
      await agent.start();
    } catch (e) {
      throw notWritable(e);
    }
    supervisor.ready();
    // The link's reconnect timer and socket keep the process alive; this only waits for the end.
    const code = await new Promise<number>((resolve) => {
      const stop = () => {
        supervisor.stopping();
        void agent.stop().then(() => resolve(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      switched = () => {
        supervisor.stopping();
        void agent.stop().then(() => resolve(EXIT_SWITCH));
      };
      agent.link.once('refused', (reason) => {
        log(
          `the server refused this box's credentials: ${reason}. Check --device and the secret (--secret-file or BOXHUB_AGENT_SECRET); the device may have been removed or its secret rotated.`,
        );
        supervisor.stopping();
        void agent.stop().then(() => resolve(EXIT_CREDENTIALS_REFUSED));
      });
    });
    return code;
  },
});
