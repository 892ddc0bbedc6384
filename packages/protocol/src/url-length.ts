// The one length rule for URLs the API takes (callback_url, print file_url, scan direct_addr)
// and the addresses it hands out to be given back (a recognition task's direct_addr): at most
// 200 characters, a character being a Unicode code point of the string as sent. That is what
// JSON Schema's maxLength counts (Ajv counts code points, not UTF-16 units), so the request
// schemas and the URL guard give one answer for every string, astral characters included
// (docs/callbacks.md, "Safety").

export const MAX_URL_CHARS = 200;

/** The length of a URL as the rule counts it: Unicode code points. */
export function urlChars(url: string): number {
  let n = 0;
  for (const _ of url) n++;
  return n;
}
