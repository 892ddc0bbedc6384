// What a `boxhub` command is: its flags, help and examples as data, so that every command parses
// the same way (strict: an unknown option is a usage error), answers --help the same way, and
// fails the same way (exit.ts). A group (app, device, card, app key) holds subcommands.
import { parseArgs } from 'node:util';
import { errnoCode, EXIT, report, UsageError } from './exit.ts';

export interface Flag {
  type: 'string' | 'boolean';
  /** The value's name in the help (string flags): DEVICE, FILE, N. */
  arg?: string;
  help: string;
  multiple?: boolean;
  required?: boolean;
  /** A deprecated spelling of this other flag: still accepted (with a warning on stderr). */
  deprecatedFor?: string;
}

export type Flags = Record<string, Flag>;

// Flag itself (a command's flags not known): whatever node:util's parseArgs may give.
type Value<F extends Flag> = Flag extends F
  ? string | boolean | Array<string | boolean>
  : F extends { type: 'boolean' }
    ? boolean
    : F extends { multiple: true }
      ? string[]
      : string;

/** A required flag is always there when run() is called: runLeaf checks it first. */
type Values<F extends Flags> = { [K in keyof F as F[K] extends { required: true } ? K : never]: Value<F[K]> } & {
  [K in keyof F as F[K] extends { required: true } ? never : K]?: Value<F[K]>;
};

export interface Context<F extends Flags> {
  /** e.g. "app key list" */
  path: string;
  values: Values<F>;
  args: string[];
  /** --json was given: stdout carries only JSON. */
  json: boolean;
  /** The service the command talks to, for error messages (set by connect()). */
  server?: string;
  /** Where connect() found the server and the API key, said when they fail (docs/cli.md). */
  found?: { server: string; key: string };
}

export interface CommandSpec<F extends Flags> {
  summary: string;
  /** What follows `boxhub <path>` in the usage line, e.g. "FILE --device DEVICE [options]". */
  usage: string;
  /** A paragraph or two after the usage line. */
  description?: string;
  flags: F;
  /** Positional arguments: their name in messages and how many (none when absent). */
  args?: { name: string; min: number; max: number };
  /** What --json prints, in a line (docs/cli.md has the details). */
  json?: string;
  examples: string[];
  run(ctx: Context<F>): Promise<number>;
}

export interface Leaf {
  kind: 'leaf';
  summary: string;
  spec: CommandSpec<Flags>;
}
export interface Group {
  kind: 'group';
  summary: string;
  description?: string;
  examples: string[];
  subcommands: Record<string, Node | Lazy>;
}
/** A command whose module is loaded only when it runs (so `boxhub card` never loads the server). */
export interface Lazy {
  kind: 'lazy';
  summary: string;
  load(): Promise<Node>;
}
export type Node = Leaf | Group;

export function defineCommand<const F extends Flags>(spec: CommandSpec<F>): Leaf {
  return { kind: 'leaf', summary: spec.summary, spec: spec as unknown as CommandSpec<Flags> };
}

export function defineGroup(g: Omit<Group, 'kind'>): Group {
  return { kind: 'group', ...g };
}

export function lazy(summary: string, load: () => Promise<{ command: Node }>): Lazy {
  return { kind: 'lazy', summary, load: async () => (await load()).command };
}

export const resolveNode = async (n: Node | Lazy): Promise<Node> => (n.kind === 'lazy' ? n.load() : n);

// Flags several commands share, spelled once so they stay the same everywhere.
export const common = {
  json: { type: 'boolean', help: 'print the result as JSON on stdout (progress and messages go to stderr)' },
  server: {
    type: 'string',
    arg: 'URL',
    help: "the boxhub service (default $BOXHUB_URL, else the demo's address\nfrom data/demo.json, else http://127.0.0.1:8080)",
  },
  keyFile: {
    type: 'string',
    arg: 'FILE',
    help: "file holding the API key (default $BOXHUB_API_KEY, else the demo's\nkey; never a flag: a command line shows in `ps`)",
  },
  device: { type: 'string', arg: 'DEVICE', help: 'the box: its uuid or the code on its label', required: true },
  timeout: { type: 'string', arg: 'SEC', help: 'give up after SEC seconds, exit 1 (default: wait for the end)' },
} as const satisfies Flags;

export const EXIT_CODES_HELP =
  "exit codes: 0 done, 1 failed (the service's error code is printed), 2 usage, 3 service\nunreachable or credentials refused, 130 interrupted (docs/cli.md)";

function flagColumn(name: string, f: Flag): string {
  return `--${name}${f.type === 'string' ? ` ${f.arg ?? 'VALUE'}` : ''}`;
}

function table(rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  return rows
    .map(([l, r]) => {
      const [first, ...rest] = r.split('\n');
      return [`  ${l.padEnd(width)}${first}`, ...rest.map((x) => `  ${' '.repeat(width)}${x}`)].join('\n');
    })
    .join('\n');
}

export function leafHelp(path: string, spec: CommandSpec<Flags>): string {
  const live = Object.entries(spec.flags).filter(([, f]) => !f.deprecatedFor);
  const old = Object.entries(spec.flags).filter(([, f]) => f.deprecatedFor);
  const rows: Array<[string, string]> = live.map(([n, f]) => [
    flagColumn(n, f),
    `${f.help}${f.required ? ' (required)' : ''}`,
  ]);
  rows.push(['--help', 'this text']);
  const parts = [`usage: boxhub ${path} ${spec.usage}`.trimEnd(), ''];
  if (spec.description) parts.push(spec.description, '');
  parts.push('options:', table(rows), '');
  if (old.length > 0)
    parts.push(
      'deprecated spellings (still accepted):',
      table(old.map(([n, f]) => [flagColumn(n, f), `use --${f.deprecatedFor}`])),
      '',
    );
  if (spec.json) parts.push(`--json prints: ${spec.json}`, '');
  parts.push('examples:', ...spec.examples.map((e) => `  ${e}`), '', EXIT_CODES_HELP);
  return `${parts.join('\n')}\n`;
}

export function groupHelp(path: string, g: Group): string {
  const rows: Array<[string, string]> = Object.entries(g.subcommands).map(([n, s]) => [n, s.summary]);
  const parts = [`usage: boxhub ${path ? `${path} ` : ''}<command> [options]`, ''];
  if (g.description) parts.push(g.description, '');
  parts.push('commands:', table(rows), '');
  parts.push('examples:', ...g.examples.map((e) => `  ${e}`), '');
  parts.push(
    `'boxhub ${path ? `${path} ` : ''}<command> --help' (or 'boxhub help ${path ? `${path} ` : ''}<command>') shows a command's options.`,
    '',
    EXIT_CODES_HELP,
  );
  return `${parts.join('\n')}\n`;
}

/** Edit distance (a swap of two letters counts one), to suggest the flag or command that was meant. */
function distance(a: string, b: string): number {
  // One row per letter of a (row i: the distances from a's first i letters), the row before and
  // the one before that kept for the swap; at(-1) of a full row is the distance to all of b.
  const at = (row: number[], j: number): number => row[j] ?? Number.POSITIVE_INFINITY;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(prev, j) + 1, at(row, j - 1) + 1, at(prev, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(before, j - 2) + 1);
      row.push(best);
    }
    before = prev;
    prev = row;
  }
  return at(prev, b.length);
}

export function suggest(word: string, choices: string[]): string {
  const best = choices.map((c) => ({ c, d: distance(word, c) })).sort((x, y) => x.d - y.d)[0];
  return best && best.d <= Math.max(1, Math.floor(word.length / 3)) ? ` (did you mean ${best.c}?)` : '';
}

const wantsHelp = (argv: string[]): boolean => {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
};

/** node:util's messages are long and capitalised; these are one short line each. */
function parseProblem(e: Error, flags: Flags): string {
  const quoted = /'([^']+)'/.exec(e.message)?.[1] ?? '';
  switch (errnoCode(e)) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const [name = ''] = quoted.split('=');
      return `unknown option '${name}'${suggest(
        name,
        Object.entries(flags)
          .filter(([, f]) => !f.deprecatedFor)
          .map(([n]) => `--${n}`),
      )}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = /--[a-z0-9-]+/.exec(e.message)?.[0] ?? quoted;
      return flags[name.slice(2)]?.type === 'boolean' ? `${name} takes no value` : `${name} needs a value`;
    }
    default:
      return e.message;
  }
}

export async function runLeaf(path: string, spec: CommandSpec<Flags>, argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(leafHelp(path, spec));
    return EXIT.ok;
  }
  const json = argv.includes('--json');
  const ctx: Context<Flags> = { path, values: {}, args: [], json };
  try {
    let parsed;
    try {
      const options = Object.fromEntries(
        Object.entries(spec.flags).map(([n, f]) => [n, { type: f.type, ...(f.multiple ? { multiple: true } : {}) }]),
      );
      parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
    } catch (e) {
      if (e instanceof Error && errnoCode(e)?.startsWith('ERR_PARSE_ARGS'))
        throw new UsageError(parseProblem(e, spec.flags));
      throw e;
    }
    const values: Values<Flags> = parsed.values;
    for (const [name, f] of Object.entries(spec.flags)) {
      if (!f.deprecatedFor || values[name] === undefined) continue;
      if (values[f.deprecatedFor] !== undefined)
        throw new UsageError(`--${name} is an old spelling of --${f.deprecatedFor}: give one of them`);
      process.stderr.write(`boxhub ${path}: --${name} is deprecated; use --${f.deprecatedFor}\n`);
      values[f.deprecatedFor] = values[name];
      delete values[name];
    }
    for (const [name, f] of Object.entries(spec.flags)) {
      const value = values[name];
      if (f.required && (value === undefined || (typeof value === 'string' && !value.trim())))
        throw new UsageError(`--${name} is required`);
    }
    const { name, min, max } = spec.args ?? { name: '', min: 0, max: 0 };
    const args = parsed.positionals;
    if (args.length > max) throw new UsageError(`unexpected argument '${args[max]}'`);
    if (args.length < min) throw new UsageError(`${name} is needed`);
    ctx.values = values;
    ctx.args = args;
    return await spec.run(ctx);
  } catch (e) {
    return report(e, { path, json, server: ctx.server, found: ctx.found });
  }
}

/** Finds the node `words` lead to; what is left are the leaf's arguments. */
export async function walk(
  root: Group,
  words: string[],
): Promise<{ node: Node; path: string[]; rest: string[]; help: boolean }> {
  let node: Node = root;
  const path: string[] = [];
  let help = false;
  let i = 0;
  for (let name = words[i]; node.kind === 'group' && name !== undefined && !name.startsWith('-'); name = words[i]) {
    // `boxhub card help recognize` is `boxhub help card recognize`.
    if (name === 'help' && !Object.hasOwn(node.subcommands, name)) {
      help = true;
      i++;
      continue;
    }
    const next: Node | Lazy | undefined = Object.hasOwn(node.subcommands, name) ? node.subcommands[name] : undefined;
    if (!next) {
      const where = path.length ? `boxhub ${path.join(' ')}` : 'boxhub';
      throw new UsageError(
        `${where}: unknown command '${name}'${suggest(name, Object.keys(node.subcommands))}; see '${where} --help'`,
      );
    }
    node = await resolveNode(next);
    path.push(name);
    i++;
  }
  return { node, path, rest: words.slice(i), help };
}

/** Every command and group under `root`, as word lists (the help test walks them all). */
export async function allPaths(
  root: Group,
  prefix: string[] = [],
): Promise<Array<{ path: string[]; kind: Node['kind'] }>> {
  const out: Array<{ path: string[]; kind: Node['kind'] }> = [];
  for (const [name, sub] of Object.entries(root.subcommands)) {
    const node = await resolveNode(sub);
    const path = [...prefix, name];
    out.push({ path, kind: node.kind });
    if (node.kind === 'group') out.push(...(await allPaths(node, path)));
  }
  return out;
}

/** A whole number flag within bounds, or undefined when not given. */
export function intFlag(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new UsageError(`--${name} must be a whole number ${min}-${max}, not '${v}'`);
  return Number(v);
}
