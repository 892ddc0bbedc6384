// The recognizer the benchmark measures: this repository's (default) or another copy of
// packages/recognizer/src named by BOXHUB_BENCH_RECOGNIZER, e.g. an older commit's, for
// before/after figures from the same generators:
//   mkdir -p .tmp/before && git archive <ref> packages/recognizer/src | tar -x -C .tmp/before
//   BOXHUB_BENCH_RECOGNIZER=.tmp/before/packages/recognizer/src npm run bench recognizer
// Templates come from the same copy, so "before" cards are printed as that version printed them.
// The copy must live inside the repository so that it finds node_modules.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export type Recognizer = typeof import('../../packages/recognizer/src/index.ts');

const root = new URL('../../', import.meta.url).pathname;

export function recognizerEntry(): string {
  const dir = process.env.BOXHUB_BENCH_RECOGNIZER;
  return dir
    ? pathToFileURL(resolve(root, dir, 'index.ts')).href
    : new URL('../../packages/recognizer/src/index.ts', import.meta.url).href;
}

export function loadRecognizer(): Promise<Recognizer> {
  return import(recognizerEntry()) as Promise<Recognizer>;
}
