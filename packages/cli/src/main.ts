// Command dispatch: `boxhub <command> [subcommand] [options]`. Each command lives in its own
// file under commands/ and is loaded only when called, so `boxhub card ...` never loads the
// server and `boxhub agent` never loads the recognizer. Parsing, --help and failures are the
// same for all (command.ts, exit.ts; docs/cli.md).
import { readFileSync } from 'node:fs';
import { allPaths, defineGroup, groupHelp, lazy, leafHelp, runLeaf, walk, type Group } from './command.ts';
import { EXIT, report, UsageError } from './exit.ts';

export const root: Group = defineGroup({
  summary: 'the boxhub command',
  description:
    'Runs the service and the box agent, administers applications and boxes, and scans, prints\nand reads feedback cards through the API. Every command answers --help; docs/cli.md has them all.',
  examples: [
    'boxhub serve --demo',
    'boxhub scan --device BX0042 --out scans/',
    'boxhub print worksheet.pdf --device BX0042 --duplex',
    'boxhub help card run',
  ],
  subcommands: {
    serve: lazy(
      'run the service (--demo: with a demo application and a simulated box)',
      () => import('./commands/serve.ts'),
    ),
    agent: lazy('run the box agent: the program on the box', () => import('./commands/agent.ts')),
    launch: lazy(
      "run the current agent release under the box's supervisor; roll back a failed one",
      () => import('./commands/launch.ts'),
    ),
    app: lazy("applications and their API keys (on the service's database)", () => import('./commands/app.ts')),
    device: lazy("boxes and their secrets (on the service's database)", () => import('./commands/device.ts')),
    bind: lazy(
      'bind a box to this application (by its uuid or the code on its label)',
      () => import('./commands/bind.ts'),
    ),
    unbind: lazy('unbind a box from this application', () => import('./commands/unbind.ts')),
    devices: lazy('the boxes bound to this application, 100 a page', () => import('./commands/devices.ts')),
    scan: lazy('scan on a box and download the PDFs', () => import('./commands/scan.ts')),
    print: lazy('print a PDF or JPEG on a box', () => import('./commands/print.ts')),
    'device-events': lazy(
      'where device events go: a box online/offline, printer and scanner state',
      () => import('./commands/device-events.ts'),
    ),
    release: lazy('agent releases: signing keys, signing, upload', () => import('./commands/release.ts')),
    rollout: lazy('roll an agent release out to boxes in waves', () => import('./commands/rollout.ts')),
    card: lazy(
      'feedback cards: run a class stack, make templates, recognize scans',
      () => import('./commands/card.ts'),
    ),
  },
});

/** Every command path, for the test that runs --help on each. */
export const commandPaths = () => allPaths(root);

function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(`boxhub ${version()}\n`);
    return EXIT.ok;
  }
  // `boxhub help [command...]` is `boxhub [command...] --help` (walk() takes the word out).
  try {
    const { node, path, rest, help: asking } = await walk(root, argv);
    const name = path.join(' ');
    if (node.kind === 'leaf') {
      if (asking) {
        if (rest.length > 0)
          throw new UsageError(`boxhub ${name}: no command '${rest[0]}'; see 'boxhub ${name} --help'`);
        process.stdout.write(leafHelp(name, node.spec));
        return EXIT.ok;
      }
      return await runLeaf(name, node.spec, rest);
    }
    const helpFlag = rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h');
    if ((asking && rest.length === 0) || helpFlag) {
      process.stdout.write(groupHelp(name, node));
      return EXIT.ok;
    }
    const where = name ? `boxhub ${name}` : 'boxhub';
    const [word] = rest;
    if (word === undefined) {
      // `boxhub` alone: what there is, on stderr (the command line is incomplete).
      if (!name) {
        process.stderr.write(groupHelp(name, node));
        return EXIT.usage;
      }
      throw new UsageError(
        `${where}: a command is needed (${Object.keys(node.subcommands).join(', ')}); see '${where} --help'`,
      );
    }
    throw new UsageError(
      `${where}: ${word.startsWith('-') ? `unknown option '${word}'` : `unknown command '${word}'`}; see '${where} --help'`,
    );
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return EXIT.usage;
    }
    return report(e, { path: '', json: false });
  }
}
