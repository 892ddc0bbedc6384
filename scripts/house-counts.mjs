#!/usr/bin/env node
// The house's hygiene counts (docs/architecture.md, "Lint and format"): type assertions (`as`,
// not `as const`), `as unknown as`, non-null assertions (`!`) and lines over 120 characters, in
// the sources (tests, test rigs and generated files apart), read with TypeScript's own parser so
// that comments and strings do not count. `node scripts/house-counts.mjs [--json]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'generated', 'test', 'testing', 'corpus']);

function sources(dir, out) {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const counts = { files: 0, lines: 0, longLines: 0, as: 0, asUnknownAs: 0, nonNull: 0 };
for (const file of ['packages', 'bench', 'scripts'].flatMap((d) => sources(join(root, d), []))) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  counts.files++;
  counts.lines += lines.length;
  counts.longLines += lines.filter((l) => l.length > 120).length;
  const sf = ts.createSourceFile(relative(root, file), text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const visit = (node) => {
    if (ts.isAsExpression(node)) {
      const t = node.type;
      const isConst = ts.isTypeReferenceNode(t) && t.typeName.getText(sf) === 'const';
      if (!isConst) counts.as++;
      if (ts.isAsExpression(node.expression) && node.expression.type.kind === ts.SyntaxKind.UnknownKeyword)
        counts.asUnknownAs++;
    } else if (ts.isNonNullExpression(node)) counts.nonNull++;
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
if (process.argv.includes('--json')) console.log(JSON.stringify(counts));
else
  console.log(
    Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join('\n'),
  );
