// `--page N` of the list commands: a page number from 1 (the operator API's paging), and a page
// shown as plain lines.
import { UsageError } from './exit.ts';

export const pageFlag = { type: 'string', arg: 'N', help: 'page N (default 1)' } as const;

export function pageOf(v: string | undefined): number {
  if (v === undefined) return 1;
  if (!/^[1-9][0-9]{0,5}$/.test(v)) throw new UsageError(`--page must be a page number from 1, not '${v}'`);
  return Number(v);
}

/** A page of a list as plain lines: one per row, then where the page is. */
export function listText(l: { page: number; page_size: number; total: number }, rows: string[], noun: string): string {
  const last = Math.max(1, Math.ceil(l.total / l.page_size));
  return [...rows, `page ${l.page} of ${last}, ${l.total} ${noun}`].join('\n');
}
