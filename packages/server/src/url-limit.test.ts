// The one URL length rule (@boxhub/protocol url-length.ts): at most 200 Unicode code points,
// the same count in the request schemas and in the URL guard, astral characters included; and
// the service's own recognition addresses keep to it, checked on BOXHUB_PUBLIC_URL at start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_URL_CHARS, urlChars } from '@boxhub/protocol';
import { ConfigError, loadConfig } from './config.ts';
import { urlSyntaxProblem } from './net/url-guard.ts';
import { startTestServer, type TestServer } from './testing/harness.ts';

/** 😀 is one code point and two UTF-16 units. */
const ASTRAL = '\u{1F600}';
/** An http URL of exactly `n` code points, filled with astral characters. */
const astralUrl = (n: number, base = 'http://127.0.0.1/') => base + ASTRAL.repeat(n - urlChars(base));

test('the rule counts code points: an astral URL of 200 passes, 201 does not, whatever its UTF-16 length', () => {
  const at = astralUrl(MAX_URL_CHARS);
  assert.equal(urlChars(at), 200);
  assert.ok(at.length > 300, 'its UTF-16 length is far over 200');
  assert.equal(urlSyntaxProblem(at), undefined);
  assert.match(urlSyntaxProblem(astralUrl(MAX_URL_CHARS + 1)) ?? '', /longer than 200 characters/);
});

describe('BOXHUB_PUBLIC_URL is checked at start against the addresses made from it', () => {
  // {public URL}/direct/{43-character token}: 51 characters after the public URL.
  test('149 characters is the longest that fits; 150 refuses to start, naming the setting and the count', () => {
    const longest = `https://boxhub.example/${'p'.repeat(149 - 23)}`;
    assert.equal(urlChars(longest), 149);
    assert.equal(loadConfig({ BOXHUB_PUBLIC_URL: longest }).publicUrl, longest);
    assert.throws(
      () => loadConfig({ BOXHUB_PUBLIC_URL: `${longest}p` }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(
          e.message,
          /^BOXHUB_PUBLIC_URL is too long: a recognition task's direct_addr .* would be 201 characters, over the 200 a direct_addr may have; shorten BOXHUB_PUBLIC_URL by 1 characters or more$/,
        );
        return true;
      },
    );
    // Counted as the rule counts: 149 code points of astral characters fit too.
    assert.doesNotThrow(() => loadConfig({ BOXHUB_PUBLIC_URL: astralUrl(149, 'https://boxhub.example/') }));
  });

  test('without it, the listen address is the base: a HOST too long for it refuses to start', () => {
    assert.throws(
      () => loadConfig({ HOST: `${'h'.repeat(63)}.${'h'.repeat(63)}.${'h'.repeat(63)}.example` }),
      /HOST is too long for the service's own addresses: .* set BOXHUB_PUBLIC_URL/,
    );
    assert.equal(
      loadConfig({
        HOST: `${'h'.repeat(63)}.${'h'.repeat(63)}.${'h'.repeat(63)}.example`,
        BOXHUB_PUBLIC_URL: 'https://boxhub.example',
      }).publicUrl,
      'https://boxhub.example',
    );
  });
});

describe("ess/create's address at the limit is one scan create takes", () => {
  let t: TestServer;
  // The longest public URL, in astral characters: the address is 200 code points, 349 UTF-16 units.
  const publicUrl = astralUrl(149, 'http://127.0.0.1/');
  before(async () => {
    t = await startTestServer({ env: { BOXHUB_PUBLIC_URL: publicUrl, BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('direct_addr of 200 code points passes the schema and the guard; the refusal is the offline box', async () => {
    const app = await t.createApp('limit', { ess: true });
    const created = await app.api.post('/api/application/ess/create', { callback_url: astralUrl(200) });
    assert.equal(created.code, 0, created.msg);
    const addr = String((created.data as { direct_addr: string }).direct_addr);
    assert.equal(urlChars(addr), 200);
    assert.ok(addr.startsWith(publicUrl));
    const d = await t.registerDevice();
    assert.equal((await app.api.post('/api/client/bind', { uuid: d.uuid, name: 'offline' })).code, 0);
    const scan = await app.api.post('/api/scan/create', {
      client_uuid: d.uuid,
      options: { direct_mode: 1, direct_addr: addr },
    });
    assert.equal(scan.code, 30004, `${scan.code} ${scan.msg}`);
    // One character more is over the rule, for the schema and the guard alike.
    const over = await app.api.post('/api/scan/create', {
      client_uuid: d.uuid,
      options: { direct_mode: 1, direct_addr: `${addr}x` },
    });
    assert.equal(over.code, 10001);
    assert.match(over.msg, /direct_addr/);
  });
});
