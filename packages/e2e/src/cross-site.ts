// A page on another origin that posts a form to the console as soon as it loads, with the fields
// given and no CSRF token (it cannot know it): what a hostile site does to a signed-in teacher.
// The console must refuse it (docs/console.md, "Security").
import { createServer } from 'node:http';

export interface CrossSite {
  /** The attacking origin, ending in '/'; its paths are the keys of the forms given. */
  url: string;
  close(): Promise<void>;
}

export async function crossSiteForms(
  consoleUrl: string,
  forms: Record<string, { action: string; fields: Record<string, string> }>,
): Promise<CrossSite> {
  const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const server = createServer((req, res) => {
    const f = forms[req.url ?? ''];
    if (!f) return void res.writeHead(404).end();
    const inputs = Object.entries(f.fields)
      .map(([k, v]) => `<input type="hidden" name="${attr(k)}" value="${attr(v)}">`)
      .join('');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<form id="f" method="post" action="${attr(consoleUrl + f.action)}">${inputs}</form><script>document.getElementById('f').submit()</script>`,
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  return {
    url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
