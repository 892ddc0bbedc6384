// "Source mode": running the TypeScript sources without a build (docs/architecture.md, "Build
// and run"). Every @boxhub/* package's `exports` maps to dist/ by default and to src/ under the
// `@boxhub/source` condition; tsx compiles the sources as they load. Both go in NODE_OPTIONS
// so that the processes a test or a bench starts (the `boxhub` command, a second server node,
// worker threads) run on the sources too. tsx is given as an absolute URL: a child started in
// another directory would not find the bare name.
export const SOURCE_NODE_OPTIONS = `--conditions=@boxhub/source --import=${import.meta.resolve('tsx')}`;

/** `env` with source mode added to its NODE_OPTIONS. */
export function sourceEnv(env = process.env) {
  return { ...env, NODE_OPTIONS: [env.NODE_OPTIONS, SOURCE_NODE_OPTIONS].filter(Boolean).join(' ') };
}
