// The project stands alone: a comment explains itself or cites the project's own docs (the API
// contract is docs/api.md). It never cites an issue number, a design note kept outside the
// repository, or the API contract by any other name, and every docs/<name>.md a comment names
// exists. The docs and READMEs follow the same rule. Comments are found by the TypeScript parser,
// so strings and identifiers are not comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('../../../', import.meta.url).pathname;
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
/** Installed packages, built output and generated code (its comments come from its generator). */
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'packages/sdk/src/generated']);

function sources(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name.startsWith('.') || SKIPPED.has(name) || SKIPPED.has(relative(root, path))) continue;
    if (statSync(path).isDirectory()) sources(path, out);
    else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

/** Every comment of a source file, with its line: the leading and trailing comments of every token. */
function comments(path: string): Array<{ line: number; text: string }> {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.getChildren(file).forEach(visit);
  };
  collect(ts.getLeadingCommentRanges(text, 0));
  visit(file);
  return [...seen].map(([pos, comment]) => ({ line: file.getLineAndCharacterOfPosition(pos).line + 1, text: comment }));
}

/** Standards whose specification a comment may name (not the API contract). */
const NAMED_SPEC = /\b(eSCL|IPP|PWG|OpenAPI|JSON Schema|Standard Webhooks|HTTP|RFC \d+|JPEG|PDF|SANE|HPKE) spec\b/gi;
const RULES: Array<{ name: string; pattern: RegExp }> = [
  { name: 'cites an issue number', pattern: /\bissues?\s*#?\d+/i },
  { name: 'cites a design note outside the repository', pattern: /(^|[^\w/])design\/[\w.-]+\.md/ },
  { name: 'cites "the spec" (cite docs/api.md or the doc that describes the rule)', pattern: /\bspec\b/i },
];

interface Finding {
  where: string;
  rule: string;
  text: string;
}

function scan(): { findings: Finding[]; missingDocs: string[]; files: number } {
  const files = ['packages', 'bench', 'scripts'].flatMap((d) => sources(join(root, d), []));
  const findings: Finding[] = [];
  const missing = new Set<string>();
  for (const path of files) {
    for (const c of comments(path)) {
      const where = `${relative(root, path)}:${c.line}`;
      const plain = c.text.replace(NAMED_SPEC, '');
      for (const rule of RULES) {
        const m = rule.pattern.exec(plain);
        if (m) findings.push({ where, rule: rule.name, text: plain.slice(Math.max(0, m.index - 40), m.index + 40) });
      }
      for (const m of c.text.matchAll(/(?<![\w/.-])docs\/([\w/.-]+?\.md)\b/g)) {
        if (!existsSync(join(root, 'docs', m[1] ?? ''))) missing.add(`${where}: docs/${m[1]}`);
      }
    }
  }
  return { findings, missingDocs: [...missing], files: files.length };
}

const result = scan();

test('comments cite the project\'s docs, not issue numbers, design notes or "the spec"', () => {
  assert.ok(result.files > 300, `the source files are found (${result.files})`);
  const lines = result.findings.map((f) => `${f.where}: ${f.rule}: …${f.text.replace(/\s+/g, ' ')}…`);
  const what = `${lines.length} comment(s) cite what a reader of the repository cannot follow`;
  assert.equal(lines.length, 0, `${what}:\n${lines.join('\n')}`);
});

/** The repository's prose: docs/, and every README (the root's, the packages', the benches'). */
function markdown(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name.startsWith('.') || SKIPPED.has(name)) continue;
    if (statSync(path).isDirectory()) markdown(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

test('the docs and READMEs cite docs/api.md, not issue numbers, design notes or "the spec"', () => {
  const files = [join(root, 'README.md'), ...['docs', 'packages', 'bench'].flatMap((d) => markdown(join(root, d), []))];
  assert.ok(files.length > 20, `the markdown files are found (${files.length})`);
  const lines: string[] = [];
  for (const path of files) {
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const plain = text.replace(NAMED_SPEC, '');
        for (const rule of RULES) {
          if (rule.pattern.test(plain)) lines.push(`${relative(root, path)}:${i + 1}: ${rule.name}`);
        }
      });
  }
  assert.equal(lines.length, 0, lines.join('\n'));
});

test('every docs/<name>.md a comment cites exists', () => {
  assert.deepEqual(result.missingDocs, [], 'comments citing docs that do not exist');
});
