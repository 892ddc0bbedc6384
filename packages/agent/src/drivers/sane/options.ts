// Parses `scanimage -d DEV -A` (the option list of a SANE device, as scanimage prints it from
// the SANE option descriptors: "--name constraint [value]", SANE standard 1.0 §4.5).

export interface SaneOption {
  name: string;
  /** Constraint text, e.g. `Gray|Color`, `1..1200dpi (in steps of 1)`, `75|150|300dpi`. */
  constraint: string;
  /** Current value in brackets; `inactive` options cannot be used now. */
  value?: string;
}

export function parseOptions(text: string): Map<string, SaneOption> {
  const out = new Map<string, SaneOption>();
  for (const line of text.split('\n')) {
    // Option lines are indented 4 spaces; their descriptions 8.
    if (!/^ {4}-/.test(line)) continue;
    let rest = line.trim();
    const head = /^--?([\w-]+)(?:\[=\(?([^)\]]*)\)?\])?/.exec(rest);
    if (!head) continue;
    rest = rest.slice(head[0].length).trim();
    // Flags scanimage prints after the value (frontend/scanimage.c print_option).
    rest = rest.replace(/(\s*\[(?:read-only|hardware|advanced|emulated|automatic)\])+$/, '');
    let value: string | undefined;
    const tail = /\s*\[([^\]]*)\]$/.exec(rest);
    if (tail) {
      value = tail[1];
      rest = rest.slice(0, tail.index).trim();
    }
    const o: SaneOption = { name: head[1]!, constraint: head[2] ?? rest };
    if (value !== undefined) o.value = value;
    out.set(o.name, o);
  }
  return out;
}

/** Resolutions the API allows (scan create options.resolution; docs/api.md, "Limits"). */
export const SPEC_RESOLUTIONS = [100, 150, 200, 240, 300, 400, 600, 1200];

/**
 * Resolutions from the --resolution constraint: a word list gives its values; a range gives
 * the SPEC_RESOLUTIONS inside it that fall on its quantisation step.
 */
export function resolutionsOf(o: SaneOption | undefined): number[] {
  if (!o) return [];
  const c = o.constraint.replace(/dpi/g, '');
  const range = /^(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)(?:\s*\(in steps of (\d+(?:\.\d+)?)\))?/.exec(c);
  if (range) {
    const [lo, hi, step] = [Number(range[1]), Number(range[2]), Number(range[3] ?? 0)];
    return SPEC_RESOLUTIONS.filter((r) => r >= lo && r <= hi && (step <= 1 || (r - lo) % step === 0));
  }
  return c
    .split('|')
    .map((v) => Number(v.trim()))
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= 4800)
    .slice(0, 16);
}

export function listValues(o: SaneOption | undefined): string[] {
  return o
    ? o.constraint
        .split('|')
        .map((v) => v.trim())
        .filter(Boolean)
    : [];
}
