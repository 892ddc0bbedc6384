// The console's templates: a tagged template that escapes every interpolated value unless it is
// already markup made by `html` itself. Device names, remarks, error texts and URLs are all
// interpolated as plain values, so none of them can become markup (docs/console.md "Security").

const MARK = Symbol('html');
export interface Html { readonly [MARK]: true; readonly text: string }

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"'`]/g, (c) => ESC[c]!);

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && (v as Html)[MARK] === true;

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return (v as readonly Value[]).map(render).join('');
  if (isHtml(v)) return v.text;
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += render(values[i]!) + strings[i + 1]!;
  return { [MARK]: true, text };
}

/** A time for people: ISO in UTC, or a dash. */
export const when = (ms: number | undefined | null): string => (ms ? new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');
