import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { addressProblem, UrlGuard, urlSyntaxProblem } from './url-guard.ts';
import { createGuardedAgent } from './guarded-agent.ts';
import { startReceiver } from '../testing/receiver.ts';

test('only public unicast addresses pass by default', () => {
  const blocked = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.10.10',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:0a00:0001::1',
    '2001:db8::1',
  ];
  for (const ip of blocked) assert.ok(addressProblem(ip, false), `${ip} should be blocked`);
  for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '[2001:4860:4860::8888]']) {
    assert.equal(addressProblem(ip, false), undefined, `${ip} should pass`);
  }
});

test('private networks can be allowed, cloud metadata never', () => {
  assert.equal(addressProblem('127.0.0.1', true), undefined);
  assert.equal(addressProblem('10.0.0.1', true), undefined);
  assert.match(addressProblem('169.254.169.254', true) ?? '', /metadata/);
  assert.match(addressProblem('fd00:ec2::254', true) ?? '', /metadata/);
  assert.match(addressProblem('::ffff:169.254.169.254', true) ?? '', /metadata/);
});

test('IPv4-compatible IPv6 (::a.b.c.d) is judged by the IPv4 it carries', () => {
  const host = new URL('http://[::127.0.0.1]/').hostname; // WHATWG URL writes it as [::7f00:1]
  assert.match(addressProblem(host, false) ?? '', /embeds 127\.0\.0\.1/);
  assert.match(addressProblem('::10.0.0.1', false) ?? '', /embeds 10\.0\.0\.1/);
  assert.match(addressProblem('::169.254.169.254', true) ?? '', /metadata/);
});

test('metadata endpoints are refused with private networks allowed, in every IPv6 spelling', () => {
  for (const ip of [
    '169.254.170.2',
    '169.254.170.23',
    '100.100.100.200',
    '168.63.129.16',
    'fd00:ec2::23',
    '64:ff9b::169.254.169.254',
    '64:ff9b::a9fe:a9fe', // NAT64, well-known prefix
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:a9fe:a9:fe00::', // NAT64 local-use prefix, /96 and /48 positions
    '2002:a9fe:a9fe::1', // 6to4
    '::ffff:0:169.254.169.254',
    '::ffff:0:a9fe:a9fe', // RFC 6145 translated
    '::ffff:169.254.170.2',
    '::169.254.169.254',
    '2001:0:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:5601:5601', // Teredo: server 169.254.169.254; client ~0x5601_5601
  ]) {
    assert.match(addressProblem(ip, true) ?? '', /metadata/, `${ip} with private networks allowed`);
    assert.ok(addressProblem(ip, false), `${ip} with private networks off`);
  }
  // Public addresses in the same forms still pass.
  for (const ip of ['64:ff9b::8.8.8.8', '2002:0808:0808::1', '::ffff:0:8.8.8.8'])
    assert.equal(addressProblem(ip, false), undefined, ip);
});

test('URL syntax: http(s) only, at most 200 characters, no credentials', () => {
  assert.equal(urlSyntaxProblem('https://example.com/hook'), undefined);
  assert.match(urlSyntaxProblem('ftp://example.com/x') ?? '', /scheme/);
  assert.match(urlSyntaxProblem('file:///etc/passwd') ?? '', /scheme/);
  assert.match(urlSyntaxProblem('not a url') ?? '', /valid/);
  assert.match(urlSyntaxProblem(`https://example.com/${'a'.repeat(181)}`) ?? '', /200/);
  assert.equal(urlSyntaxProblem(`https://example.com/${'a'.repeat(180)}`), undefined);
  assert.match(urlSyntaxProblem('https://u:p@example.com/') ?? '', /credentials/);
});

test('the guard checks IP literals (any spelling) and every DNS answer', async () => {
  const answers: Record<string, string[]> = {
    'public.test': ['93.184.216.34'],
    'rebind.test': ['93.184.216.34', '10.0.0.5'],
    'meta.test': ['169.254.169.254'],
  };
  const guard = new UrlGuard({ allowPrivateNetworks: false }, async (h) => {
    const a = answers[h];
    if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return a;
  });
  assert.equal(await guard.check('https://public.test/x'), undefined);
  assert.equal((await guard.check('https://rebind.test/x'))?.kind, 'blocked');
  assert.equal((await guard.check('https://meta.test/x'))?.kind, 'blocked');
  assert.equal((await guard.check('http://127.0.0.1:8080/x'))?.kind, 'blocked');
  assert.equal((await guard.check('http://0x7f.1/x'))?.kind, 'blocked'); // WHATWG URL: 127.0.0.1
  assert.equal((await guard.check('http://2130706433/x'))?.kind, 'blocked');
  assert.equal((await guard.check('http://[::ffff:7f00:1]/x'))?.kind, 'blocked');
  assert.equal((await guard.check('http://[fd00:ec2::254]/latest'))?.kind, 'blocked');
  assert.equal((await guard.check('https://nowhere.test/x'))?.kind, 'syntax');
  assert.equal((await guard.check('gopher://public.test/x'))?.kind, 'syntax');
});

test('the guarded agent refuses loopback by literal and by name at connect time, unless allowed', async () => {
  const rx = await startReceiver();
  const port = new URL(rx.url).port;
  const strict = createGuardedAgent({ allowPrivateNetworks: false, connectTimeoutMs: 2000 });
  const open = createGuardedAgent({ allowPrivateNetworks: true, connectTimeoutMs: 2000 });
  try {
    for (const url of [`http://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`]) {
      await assert.rejects(
        request(url, { dispatcher: strict, method: 'POST', body: '{}' }),
        (e: Error & { code?: string; cause?: { code?: string } }) =>
          e.code === 'BOXHUB_BLOCKED_ADDRESS' || e.cause?.code === 'BOXHUB_BLOCKED_ADDRESS',
        url,
      );
    }
    assert.equal(rx.received.length, 0, 'nothing reached the receiver');
    const res = await request(`http://localhost:${port}/hook`, { dispatcher: open, method: 'POST', body: '{}' });
    await res.body.dump();
    assert.equal(res.statusCode, 200);
    assert.equal(rx.received.length, 1);
  } finally {
    await strict.close();
    await open.close();
    await rx.close();
  }
});
