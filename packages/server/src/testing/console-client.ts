// A plain-HTTP client of the web console for the tests: signs in through the forms (as an
// application or as the operator), keeps the session cookie and the page's CSRF token, and
// posts forms with it (or without it, to check that the console refuses).
import assert from 'node:assert/strict';

export const cookieOf = (r: Response, name: string) => r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
export const cookieValue = (setCookie: string | undefined) =>
  setCookie?.split(';')[0]?.split('=').slice(1).join('=') ?? '';
export const fieldOf = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];

export class ConsoleClient {
  readonly base: string;
  cookie = '';
  csrf = '';
  setCookie = '';
  constructor(base: string) {
    this.base = base;
  }

  req(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      redirect: 'manual',
      ...init,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
  }

  async get(path: string): Promise<{ status: number; body: string; res: Response }> {
    const res = await this.req(path);
    return { status: res.status, body: await res.text(), res };
  }

  /** A form POST with the session's CSRF token (`csrf: null` sends none, a string sends that one). */
  async post(
    path: string,
    fields: Record<string, string> = {},
    o: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: string; res: Response }> {
    const token = o.csrf === undefined ? this.csrf : o.csrf;
    const res = await this.req(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...o.headers },
      body: new URLSearchParams({ ...(token === null ? {} : { _csrf: token }), ...fields }).toString(),
    });
    return { status: res.status, body: await res.text(), res };
  }

  /** Signs in with an application's API key through /console/login. */
  async signIn(apiKey: string): Promise<this> {
    await this.login('/console/login', 'bh_console_login', { api_key: apiKey }, 'bh_console', '/console/devices');
    return this;
  }

  /** Signs in as the operator through /console/operator/login. */
  async signInOperator(token: string): Promise<this> {
    await this.login(
      '/console/operator/login',
      'bh_console_op_login',
      { operator_token: token },
      'bh_console_op',
      '/console/operator/applications',
    );
    return this;
  }

  private async login(
    path: string,
    loginCookie: string,
    fields: Record<string, string>,
    sessionCookie: string,
    landing: string,
  ): Promise<void> {
    const page = await fetch(`${this.base}${path}`, { redirect: 'manual' });
    const login = cookieValue(cookieOf(page, loginCookie));
    const token = fieldOf(await page.text(), '_csrf')!;
    const r = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${loginCookie}=${login}` },
      body: new URLSearchParams({ _csrf: token, ...fields }).toString(),
    });
    assert.equal(r.status, 303, `sign-in at ${path}: ${await r.text()}`);
    assert.equal(r.headers.get('location'), landing);
    this.setCookie = cookieOf(r, sessionCookie)!;
    this.cookie = `${sessionCookie}=${cookieValue(this.setCookie)}`;
    const next = await this.get(landing);
    assert.equal(next.status, 200);
    this.csrf = fieldOf(next.body, '_csrf')!;
  }

  /** Takes the session a response set (a key rotation re-seals it) and its page's token. */
  adopt(res: Response, body: string, sessionCookie = 'bh_console'): void {
    const set = cookieOf(res, sessionCookie);
    if (set) this.cookie = `${sessionCookie}=${cookieValue(set)}`;
    const token = fieldOf(body, '_csrf');
    if (token) this.csrf = token;
  }
}
