// The table a chaos run prints (docs/chaos.md, "Reading the table"): one row per fault kind,
// how often it struck, and how many violations concern a time span that overlapped it.
import { FAULT_KINDS, type FaultRecord } from './faults.ts';
import { INVARIANTS, type Violation } from './checker.ts';

export function report(faults: FaultRecord[], violations: Violation[], tasks: number): string {
  const out: string[] = [];
  const width = Math.max(...[...FAULT_KINDS, ...INVARIANTS].map((n) => n.length));
  const row = (a: string, b: string, c: string, d: string) =>
    out.push(`${a.padEnd(width)} ${b.padStart(6)} ${c.padStart(10)}  ${d}`.trimEnd());
  row('fault', 'times', 'violations', 'invariants held');
  for (const kind of FAULT_KINDS) {
    const mine = faults.filter((f) => f.kind === kind && !f.target.includes('skipped'));
    const hit = violations.filter((x) => mine.some((f) => x.from <= f.until + 60_000 && x.to >= f.at));
    const broken = [...new Set(hit.map((x) => x.invariant))];
    row(
      kind,
      String(mine.length),
      String(hit.length),
      mine.length === 0 ? '(not run)' : broken.length === 0 ? 'all' : `all but ${broken.join(', ')}`,
    );
  }
  out.push('');
  row('invariant', '', 'violations', '');
  for (const inv of INVARIANTS) row(inv, '', String(violations.filter((x) => x.invariant === inv).length), '');
  if (violations.length) {
    out.push('', 'violations:');
    for (const x of violations.slice(0, 200)) out.push(`  [${x.invariant}] ${x.detail}`);
    if (violations.length > 200) out.push(`  … and ${violations.length - 200} more`);
  }
  out.push('', `chaos: ${faults.length} faults, ${violations.length} invariant violations, ${tasks} tasks`);
  return out.join('\n');
}
