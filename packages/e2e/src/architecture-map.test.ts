// The map is true and kept true (docs/architecture.md, "Every folder"): every folder of the
// repository is named in the table, and every folder the table names exists. A row whose path
// ends in `/**` covers every folder beneath it (data, such as the recognition corpus).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../../', import.meta.url).pathname;
/** Built output, installed packages and tool state: not the project's own folders. */
const IGNORED = new Set(['node_modules', 'dist', 'coverage']);
const TOP = ['bench', 'docs', 'packages', 'scripts'];

function folders(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    if (IGNORED.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) continue;
    out.push(`${relative(root, path)}/`);
    folders(path, out);
  }
  return out;
}

function tableRows(): string[] {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = doc.split('\n## Every folder\n')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] ?? '');
}

test('docs/architecture.md names every folder, and only folders that exist', () => {
  const rows = tableRows();
  assert.ok(rows.length > 50, `the table has its rows (${rows.length})`);
  const covering = rows.filter((r) => r.endsWith('/**')).map((r) => r.slice(0, -2));
  const named = new Set(rows.map((r) => (r.endsWith('/**') ? r.slice(0, -2) : r)));
  const actual = TOP.flatMap((t) => [`${t}/`, ...folders(join(root, t), [])]);
  const unnamed = actual.filter((f) => !named.has(f) && !covering.some((c) => f.startsWith(c)));
  assert.deepEqual(unnamed, [], 'folders the table does not name (add a row saying what each holds)');
  const missing = [...named].filter((f) => !actual.includes(f));
  assert.deepEqual(missing, [], 'rows naming folders that do not exist');
});
