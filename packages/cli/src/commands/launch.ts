// `boxhub launch`: what the box's supervisor runs (docs/box-agent.service). Starts the agent of
// the release that is current, watches a release on trial and rolls it back by itself
// (docs/updates.md, "Trial and rollback").
import { homedir } from 'node:os';
import { join } from 'node:path';
import { defineCommand, intFlag } from '../command.ts';

export const command = defineCommand({
  summary: 'run the current agent release, rolling back one that does not become healthy',
  usage: '[--state-dir DIR] [options] -- agent --server URL --device UUID [agent options]',
  description:
    'Runs `boxhub agent` from the release the box switched to (or the installed one) with the\narguments after --. A release on trial must connect and report healthy within --health-timeout\nof its first start and may exit at most --max-starts times before it does; otherwise the box\nswitches back to the previous release and reports why (docs/updates.md).',
  args: { name: 'the agent command', min: 1, max: 64 },
  flags: {
    'state-dir': {
      type: 'string',
      arg: 'DIR',
      help: "the agent's state directory, as given to the agent (default $STATE_DIRECTORY\nunder systemd, else ~/.boxhub-agent)",
    },
    'health-timeout': {
      type: 'string',
      arg: 'SEC',
      help: 'how long a new release has to report healthy, 5-3600 (default 120)',
    },
    'max-starts': {
      type: 'string',
      arg: 'N',
      help: 'starts of a new release without a healthy report before rollback, 1-20 (default 3)',
    },
    'restart-delay': {
      type: 'string',
      arg: 'MS',
      help: 'pause before a release on trial is started again, 0-60000 (default 1000)',
    },
  },
  examples: [
    'boxhub launch --state-dir /var/lib/boxhub -- agent --server mqtts://boxhub.example.org:8883 --device $UUID --secret-file /etc/boxhub/secret --release-key /etc/boxhub/release-key.pem',
  ],
  async run(ctx) {
    // The launcher's module alone: it stays resident beside the agent (docs/box-agent.service).
    const { runLauncher } = await import('@boxhub/agent/update/launcher.ts');
    const stateDir =
      ctx.values['state-dir'] ?? process.env.STATE_DIRECTORY?.split(':')[0] ?? join(homedir(), '.boxhub-agent');
    const log = (msg: string, extra?: Record<string, unknown>) =>
      process.stderr.write(`${new Date().toISOString()} launcher: ${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}\n`);
    return runLauncher({
      stateDir,
      args: ctx.args,
      log,
      baseEntry: new URL('../../bin/boxhub.mjs', import.meta.url).pathname,
      healthTimeoutMs: (intFlag('health-timeout', ctx.values['health-timeout'], 5, 3600) ?? 120) * 1000,
      maxStarts: intFlag('max-starts', ctx.values['max-starts'], 1, 20) ?? 3,
      restartDelayMs: intFlag('restart-delay', ctx.values['restart-delay'], 0, 60_000) ?? 1000,
    });
  },
});
