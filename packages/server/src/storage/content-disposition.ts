// The Content-Disposition both stores serve downloads with (the local routes and S3's
// response-content-disposition), from one function so the two cannot differ: an attachment
// (RFC 6266 §4), the name quoted, and for a name that is not plain ASCII an ASCII fallback plus
// the exact name in the RFC 8187 form (filename*=UTF-8''…) that browsers prefer.
export function attachment(fileName: string): string {
  // Outside printable ASCII, and the quote, backslash and percent (some clients decode %XX in
  // the plain parameter): replaced in the fallback.
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  if (ascii === fileName) return `attachment; filename="${fileName}"`;
  // encodeURIComponent leaves ' ( ) * unescaped, which RFC 8187's attr-char does not allow.
  const star = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${star}`;
}
