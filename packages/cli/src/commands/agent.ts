// `boxhub agent`: the program on the box. Connects out to the server's broker and drives the
// printer and scanner named by URI (sim:, ipp://, ipps://; sim:, sane:).
import { readFileSync } from 'node:fs';
import { BoxAgent, CommandBuzzer, SimBuzzer, createPrinterDriver, createScannerDriver, readNetworkInfo } from '@boxhub/agent';
import { execFile } from 'node:child_process';
import { guard, parse, UsageError } from '../args.ts';

export const summary = 'run the box agent: agent --server mqtt://HOST:PORT --uuid UUID [--secret-file F] [--printer URI] [--scanner URI]';

const usage = `usage: boxhub agent --server mqtt://HOST:PORT --uuid UUID [options]
  --secret-file FILE   file holding the device secret (or set BOXHUB_AGENT_SECRET)
  --printer URI        sim:, ipp://host:631/ipp/print, ipps://…, none   (default none)
  --scanner URI        sim:, sane:DEVICE, escl:http://host/eSCL, none  (default none)
  --keepalive SEC      MQTT keepalive, 5-300 (default 30)
  --buzzer-cmd CMD     command per beep, {ms} is replaced by the duration (default: simulated)
  --reboot-cmd CMD     command that reboots the box (default: systemctl reboot)
  --model NAME         box model reported to the server (default BX-1)`;

export function run(argv: string[]): Promise<number> {
  return guard(async () => {
    const { values } = parse(argv, {
      server: { type: 'string' }, uuid: { type: 'string' }, 'secret-file': { type: 'string' },
      printer: { type: 'string' }, scanner: { type: 'string' }, keepalive: { type: 'string' },
      'buzzer-cmd': { type: 'string' }, 'reboot-cmd': { type: 'string' }, model: { type: 'string' },
      help: { type: 'boolean' },
    });
    if (values.help) { process.stdout.write(`${usage}\n`); return 0; }
    if (!values.server || !values.uuid) throw new UsageError(usage);
    const secret = values['secret-file'] ? readFileSync(values['secret-file'], 'utf8').trim() : process.env.BOXHUB_AGENT_SECRET;
    if (!secret) throw new UsageError('the device secret is needed: --secret-file FILE or BOXHUB_AGENT_SECRET');
    const keepalive = Number(values.keepalive ?? 30);
    if (!Number.isInteger(keepalive) || keepalive < 5 || keepalive > 300) throw new UsageError('--keepalive must be 5-300 seconds');
    const rebootCmd = (values['reboot-cmd'] ?? 'systemctl reboot').split(/\s+/).filter(Boolean);

    const log = (msg: string, extra?: Record<string, unknown>) => process.stderr.write(`${new Date().toISOString()} ${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}\n`);
    const agent = new BoxAgent({
      link: { url: values.server, uuid: values.uuid, secret, keepaliveSec: keepalive },
      printer: await createPrinterDriver(values.printer),
      scanner: await createScannerDriver(values.scanner),
      buzzer: values['buzzer-cmd'] ? new CommandBuzzer(values['buzzer-cmd']) : new SimBuzzer(),
      identity: { model: values.model ?? 'BX-1', version: '0.1.0', firmware: process.env.BOXHUB_FIRMWARE ?? 'unknown' },
      network: readNetworkInfo,
      reboot: async () => {
        const [bin, ...args] = rebootCmd;
        if (bin) execFile(bin, args, (err) => { if (err) log('reboot failed', { error: err.message }); });
      },
      log,
    });
    agent.link.on('connected', () => log('connected', { server: values.server }));
    agent.link.on('disconnected', (reason) => log('disconnected', { reason }));
    agent.start();
    await new Promise<void>((resolve) => {
      const stop = () => { void agent.stop().then(resolve); };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  });
}
