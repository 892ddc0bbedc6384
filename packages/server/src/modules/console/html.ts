// The console's templates: a tagged template that escapes every interpolated value unless it is
// already markup made by `html` itself. Device names, remarks, error texts and URLs are all
// interpolated as plain values, so none of them can become markup (docs/console.md "Security").

const MARK = Symbol('html');
export interface Html {
  readonly [MARK]: true;
  readonly text: string;
}

const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};
export const escapeHtml = (s: string): string => s.replace(/[&<>"'`]/g, (c) => ESC[c] ?? c);

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && MARK in v && v[MARK] === true;

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

// Array.isArray alone narrows to any[].
const isList = (v: Value): v is readonly Value[] => Array.isArray(v);

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (isList(v)) return v.map(render).join('');
  if (isHtml(v)) return v.text;
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  // strings has one more entry than values: each string after the first follows a value.
  const text = strings.map((s, i) => (i === 0 ? s : render(values[i - 1]) + s)).join('');
  return { [MARK]: true, text };
}

/** A time for people: ISO in UTC, or a dash. */
export const when = (ms: number | undefined | null): string =>
  ms
    ? new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
    : '—';
