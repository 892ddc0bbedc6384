import { parseArgs, type ParseArgsConfig } from 'node:util';

/** node:util parseArgs with strict checking; a usage error becomes exit code 2 with a message. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  return parseArgs({ args: argv, options, strict: true, allowPositionals });
}

export class UsageError extends Error {}

export async function guard(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    const err = e as Error & { code?: string };
    if (e instanceof UsageError || err.code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`boxhub: ${err.message}\n`);
      return 2;
    }
    throw e;
  }
}
