// The golden corpus (test/corpus/*/): scanned sides in scan order, the layout they were
// printed from and the expected per-student results from the marks' ground truth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadLayoutDirs, recognizePage, StudentAssembler, type PageSource, type StudentResult } from '../src/index.ts';

const root = new URL('./corpus/', import.meta.url).pathname;
const cases = readdirSync(root)
  .filter((n) => statSync(join(root, n)).isDirectory())
  .sort();

test('the corpus has cases', () => {
  assert.ok(cases.length >= 4);
});

for (const name of cases) {
  test(`corpus: ${name}`, async () => {
    const dir = join(root, name);
    const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
      pages: Array<PageSource & { file: string }>;
      results: StudentResult[];
    };
    const layouts = await loadLayoutDirs([join(dir, 'layout')]);
    const assembler = new StudentAssembler(layouts);
    const got: StudentResult[] = [];
    for (const p of expected.pages) {
      const bytes = readFileSync(join(dir, p.file));
      const before = Buffer.from(bytes);
      const { file: _file, ...source } = p;
      got.push(...assembler.push(source, await recognizePage(bytes, layouts)));
      assert.deepEqual(bytes, before, 'the input image is never modified');
    }
    got.push(...assembler.end());
    // `detail` is free text for people; everything else is compared exactly.
    const strip = (r: StudentResult) => ({ error_code: r.error_code, pages: r.pages, result: r.result });
    assert.deepEqual(got.map(strip), expected.results.map(strip));
  });
}
