// The protocol holds shapes, the error catalogs and the encryption scheme over bytes: no module
// of it reads or writes files, starts processes or threads, or opens connections
// (docs/architecture.md, "Packages"). What does I/O lives where it is used: the PDF tools in
// @boxhub/pdf-tools, encrypted files on disk in the SDK's e2e-files.ts. Tests may do I/O.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const src = new URL('.', import.meta.url).pathname;
const IO =
  /^(node:)?(child_process|cluster|dgram|dns|fs|fs\/promises|http|http2|https|net|readline|tls|worker_threads|stream\/promises)$/;

function sources(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.(ts|mjs|js)$/.test(name) && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

test('no protocol module imports a module that does I/O', () => {
  const files = sources(src, []);
  assert.ok(files.length > 20, `found the protocol's modules (${files.length})`);
  const found: string[] = [];
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) {
      if (IO.test(m[1]!)) found.push(`${relative(src, f)}: ${m[1]}`);
    }
  }
  assert.deepEqual(found, []);
});
