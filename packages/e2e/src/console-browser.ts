// The web console's browser tests (docs/console.md) drive Debian's chromium with puppeteer-core
// (no browser is downloaded). This is the launch they share and the page helpers they use: each
// test file opens its own browser on its own rig, and each test signs in itself, so no test
// leans on a page another test left open.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type HTTPResponse, type Page } from 'puppeteer-core';

const CHROMIUM = process.env.BOXHUB_CHROMIUM ?? '/usr/bin/chromium';
/** With BOXHUB_CONSOLE_SCREENSHOTS=<dir> (npm run console:screenshots) main pages are saved there. */
const SHOTS = process.env.BOXHUB_CONSOLE_SCREENSHOTS;

type Dom = {
  document: {
    querySelector(s: string): { textContent: string | null } | null;
    querySelectorAll(s: string): { length: number };
  };
};

export class ConsoleBrowser {
  readonly browser: Browser;
  readonly page: Page;
  private readonly base: string;
  private readonly dispose: () => Promise<void>;

  private constructor(browser: Browser, page: Page, base: string, dispose: () => Promise<void>) {
    this.browser = browser;
    this.page = page;
    this.base = base;
    this.dispose = dispose;
  }

  /** A headless chromium with a fresh profile, one page open on the console at `base`. */
  static async open(base: string, viewport = { width: 1200, height: 800 }): Promise<ConsoleBrowser> {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    const profile = mkdtempSync(join(tmpdir(), 'boxhub-chromium-'));
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profile}`,
      ],
    });
    const page = await browser.newPage();
    await page.setViewport(viewport);
    page.setDefaultTimeout(20_000);
    return new ConsoleBrowser(browser, page, base, async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    });
  }

  /** Another session in the same browser: its own cookies (signed in as no one), its own page. */
  async session(viewport = { width: 1200, height: 800 }): Promise<ConsoleBrowser> {
    const context = await this.browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport(viewport);
    page.setDefaultTimeout(20_000);
    return new ConsoleBrowser(this.browser, page, this.base, () => context.close());
  }

  close(): Promise<void> {
    return this.dispose();
  }

  readonly shots = SHOTS;
  url = (path: string): string => `${this.base}${path}`;
  goto = (path: string): Promise<HTTPResponse | null> => this.page.goto(this.url(path));
  text = (selector: string): Promise<string> => this.page.$eval(selector, (e) => e.textContent ?? '');
  count = (selector: string): Promise<number> => this.page.$$eval(selector, (e) => e.length);
  href = (selector: string): Promise<string> =>
    this.page.$eval(selector, (a) => (a as unknown as { href: string }).href);
  /** Waits until the element's text matches. */
  waitText = async (selector: string, re: RegExp): Promise<void> => {
    await this.page.waitForFunction(
      (s, src) => new RegExp(src).test((globalThis as unknown as Dom).document.querySelector(s)?.textContent ?? ''),
      {},
      selector,
      re.source,
    );
  };
  /** Waits until exactly n elements match. */
  waitCount = async (selector: string, n: number): Promise<void> => {
    await this.page.waitForFunction(
      (s, want) => (globalThis as unknown as Dom).document.querySelectorAll(s).length === want,
      {},
      selector,
      n,
    );
  };
  /** Clicks and waits for the page it leads to. */
  go = async (selector: string): Promise<void> => {
    await Promise.all([this.page.waitForNavigation(), this.page.click(selector)]);
  };
  /** Sets a field's value at once (typing a long definition key by key is slow). */
  fill = (selector: string, value: string): Promise<void> =>
    this.page.$eval(
      selector,
      (e, v) => {
        (e as unknown as { value: string }).value = v;
      },
      value,
    );
  /** What a hostile text that ran would have set (undefined: nothing ran). */
  pwned = (): Promise<number | undefined> =>
    this.page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned);
  /**
   * Presses a destructive button and answers the console's dialog: yes confirms and waits for the
   * page it leads to; no cancels (the dialog closes, nothing is sent). Returns the question asked.
   */
  answer = async (selector: string, yes: boolean): Promise<string> => {
    await this.page.click(selector);
    await this.page.waitForSelector('#confirm-dialog[open]');
    const ask = await this.text('#confirm-dialog-ask');
    if (yes) await this.go('#confirm-dialog-yes');
    else {
      await this.page.click('#confirm-dialog-no');
      await this.page.waitForSelector('#confirm-dialog:not([open])');
    }
    return ask;
  };
  confirmed = (selector: string): Promise<string> => this.answer(selector, true);

  /** Signs in with an application's API key; the console opens on its devices. */
  async signIn(apiKey: string): Promise<void> {
    await this.goto('/console/login');
    await this.page.waitForSelector('#api_key');
    await this.page.type('#api_key', apiKey);
    await this.go('button[type=submit]');
  }

  /** Signs in as the operator. */
  async signInOperator(token: string): Promise<void> {
    await this.goto('/console/operator/login');
    await this.page.waitForSelector('#operator_token');
    await this.page.type('#operator_token', token);
    await this.go('button[type=submit]');
  }

  /** Saves the page as <name>.png when screenshots were asked for. */
  async shot(name: string, fullPage = true): Promise<void> {
    if (!SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    await this.page.screenshot({ path: join(SHOTS, `${name}.png`) as `${string}.png`, fullPage });
  }
}
