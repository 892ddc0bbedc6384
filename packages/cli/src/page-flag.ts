// `--page N` of the list commands: a page number from 1 (the operator API's paging).
import { UsageError } from './exit.ts';

export const pageFlag = { type: 'string', arg: 'N', help: 'page N (default 1)' } as const;

export function pageOf(v: string | undefined): number {
  if (v === undefined) return 1;
  if (!/^[1-9][0-9]{0,5}$/.test(v)) throw new UsageError(`--page must be a page number from 1, not '${v}'`);
  return Number(v);
}
