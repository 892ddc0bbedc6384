// The command tree as the CLI tests walk it (help.test.ts, usage.test.ts): every command path,
// each leaf with its declared options and usage, and an environment that reaches no real
// service or database.
import { commandPaths, root } from '../main.ts';
import { walk, type CommandSpec, type Flags } from '../command.ts';

export const paths = await commandPaths();
export const leaves: Array<{ name: string; words: string[]; spec: CommandSpec<Flags> }> = [];
for (const p of paths) {
  if (p.kind !== 'leaf') continue;
  const { node } = await walk(root, p.path);
  if (node.kind === 'leaf') leaves.push({ name: p.path.join(' '), words: p.path, spec: node.spec });
}
/** No environment that could reach a real service or database by accident. */
export const env = {
  BOXHUB_URL: 'http://127.0.0.1:9',
  BOXHUB_API_KEY: '',
  BOXHUB_DATA_DIR: '/nonexistent/boxhub-usage-test',
  DATABASE_URL: '',
};
