// Command dispatch: `boxhub <command> [subcommand] [options]`. Each command lives in its own
// file under commands/ and is loaded only when called, so `boxhub card ...` never loads the
// server and `boxhub agent` never loads the recognizer.
export type CommandModule = { run(argv: string[]): Promise<number>; summary: string };

const commands: Record<string, () => Promise<CommandModule>> = {
  serve: () => import('./commands/serve.ts'),
  app: () => import('./commands/app.ts'),
  device: () => import('./commands/device.ts'),
  agent: () => import('./commands/agent.ts'),
  card: () => import('./commands/card.ts'),
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name ? commands[name] : undefined;
  if (!load) {
    const lines = await Promise.all(Object.entries(commands).map(async ([n, l]) => `  ${n.padEnd(8)} ${(await l()).summary}`));
    const out = name && name !== 'help' && name !== '--help' ? process.stderr : process.stdout;
    if (name && name !== 'help' && name !== '--help') out.write(`boxhub: unknown command '${name}'\n`);
    out.write(`usage: boxhub <command> [options]\n\ncommands:\n${lines.join('\n')}\n`);
    return name && name !== 'help' && name !== '--help' ? 2 : 0;
  }
  return (await load()).run(rest);
}
