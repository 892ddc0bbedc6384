// The box program reads from the bottom up (docs/architecture.md, "Packages", the agent row):
// every import of packages/agent/src goes to its own folder or a floor below it, and no files
// import each other in a circle. A new folder must be given its floor here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const src = new URL('../../agent/src/', import.meta.url).pathname;

/** Bottom first. `drivers/types` (the device interfaces) sits below everything, `drivers/` itself above the media. */
const FLOORS = [
  'drivers/types',
  'timing',
  'store',
  'host',
  'media',
  'transfer',
  'drivers',
  'link',
  'scan',
  'update',
  'jobs',
  'commands',
  'system',
  'simulator',
  'index',
];

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The floor of a file: its top folder, or its name for a file at the top (system.ts → system). */
function floorOf(file: string): string {
  const r = relative(src, file).replace(/\.ts$/, '');
  if (r === 'drivers/types') return r;
  return r.split('/')[0]!;
}

function importsOf(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    const spec =
      ts.isImportDeclaration(n) || ts.isExportDeclaration(n)
        ? n.moduleSpecifier
        : ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword
          ? n.arguments[0]
          : undefined;
    if (spec && ts.isStringLiteral(spec) && spec.text.startsWith('.')) out.push(resolve(dirname(file), spec.text));
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const files = sources(src);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

test('every folder of the box program has a floor, and every import goes to its own floor or one below', () => {
  const unplaced = [...new Set(files.map(floorOf))].filter((f) => !FLOORS.includes(f));
  assert.deepEqual(unplaced, [], 'folders without a floor in this test');
  const upward: string[] = [];
  for (const [file, deps] of graph) {
    for (const dep of deps) {
      const from = FLOORS.indexOf(floorOf(file));
      const to = FLOORS.indexOf(floorOf(dep));
      if (to > from) upward.push(`${relative(src, file)} → ${relative(src, dep)}`);
    }
  }
  assert.deepEqual(upward, [], 'imports that run back up');
});

test('no files of the box program import each other in a circle', () => {
  // Tarjan's strongly connected components over the file graph.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(relative(src, w));
      } while (w !== v);
      if (scc.length > 1) circles.push(scc);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  assert.deepEqual(circles, []);
});
