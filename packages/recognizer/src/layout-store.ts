// Layouts the recognizer knows, keyed by the 32-bit key printed in each side's strip. The
// recognition-create call carries only a callback URL, so these come from what the template
// step stored (layout.json files).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Layout } from './layout.ts';

export interface LayoutSet {
  get(key: number): Layout | undefined;
  all(): Layout[];
}

export class LayoutFormatError extends Error {}

function checkLayout(x: unknown, where: string): Layout {
  const l = x as Partial<Layout> | null;
  if (
    !l ||
    typeof l !== 'object' ||
    l.format !== 'boxhub-card-layout' ||
    l.version !== 1 ||
    typeof l.layout_id !== 'string' ||
    !/^[0-9a-f]{8}$/.test(l.layout_id) ||
    !Array.isArray(l.sides) ||
    !Array.isArray(l.chapters)
  ) {
    throw new LayoutFormatError(`${where}: not a boxhub card layout (format boxhub-card-layout, version 1)`);
  }
  return l as Layout;
}

export function createLayoutSet(layouts: readonly unknown[]): LayoutSet {
  const map = new Map<number, Layout>();
  layouts.forEach((x, i) => {
    const l = checkLayout(x, `layout ${i}`);
    map.set(parseInt(l.layout_id, 16) >>> 0, l);
  });
  return { get: (k) => map.get(k >>> 0), all: () => [...map.values()] };
}

/** Every layout.json (or *.layout.json) in each directory, not recursive. */
export async function loadLayoutDirs(dirs: readonly string[]): Promise<LayoutSet> {
  const found: unknown[] = [];
  for (const dir of dirs) {
    const names = (await readdir(dir)).filter((n) => n === 'layout.json' || n.endsWith('.layout.json')).sort();
    if (names.length === 0) throw new LayoutFormatError(`${dir}: no layout.json`);
    for (const n of names) {
      const path = join(dir, n);
      try {
        found.push(checkLayout(JSON.parse(await readFile(path, 'utf8')), path));
      } catch (e) {
        if (e instanceof LayoutFormatError) throw e;
        throw new LayoutFormatError(`${path}: ${(e as Error).message}`);
      }
    }
  }
  return createLayoutSet(found);
}
