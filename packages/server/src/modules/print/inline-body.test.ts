// file_content decoded inside the request's bytes (inline-body.ts) answers exactly what the
// ordinary way answers (JSON.parse, then decodeBase64): the same file, or the same error; what
// it cannot decode the same way (\u escapes, non-ASCII, the key twice, nested) it leaves to the
// ordinary way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { findFileContent, HeldBody } from './inline-body.ts';
import { decodeBase64 } from './fetch-file.ts';

const MAX = 1 << 20;
const wrap = (content: string) =>
  `{"client_uuid":"x","file_type":"pdf","file_content":"${content}","options":{"file_content":"zz"}}`;

/** The held way: the file, the error's message, or 'ordinary' when it leaves it to the ordinary way. */
function held(json: string, max = MAX): string {
  const buf = Buffer.from(json);
  const span = findFileContent(buf);
  if (!span) return 'ordinary';
  const h = new HeldBody();
  if (!h.hold(buf, span.start, span.end)) return 'ordinary';
  try {
    return h.decode('AAAA', max).toString('hex');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}
function ordinary(json: string, max = MAX): string {
  try {
    return decodeBase64((JSON.parse(json) as { file_content: string }).file_content, max).toString('hex');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

test('the same file or the same error as JSON.parse and decodeBase64, for valid and invalid Base64 with the escapes encoders write', () => {
  let heldCount = 0;
  for (let n = 0; n < 40; n++) {
    const b64 = randomBytes(n).toString('base64');
    const variants = [
      b64,
      b64.replace(/\//g, '\\/'),
      (b64.match(/.{1,8}/g) ?? []).join('\\n'),
      (b64.match(/.{1,76}/g) ?? []).join('\\r\\n'),
      ` ${b64} `,
      `${b64}\\t`,
      `\\f${b64}`,
      `${b64}=`,
      b64.slice(1),
      b64.replace(/=/g, ''),
      `${b64}A`,
      `-${b64}`,
      `${b64}_`,
      `A=${b64}`,
    ];
    for (const v of variants) {
      const json = wrap(v);
      const got = held(json);
      if (got === 'ordinary') continue;
      heldCount++;
      assert.equal(got, ordinary(json), JSON.stringify(v));
    }
  }
  for (const v of ['A===', '====', 'AB=C', '  ', 'QQ==QQ==', 'QUJD', 'QUI=', 'QQ=='])
    assert.equal(held(wrap(v)), ordinary(wrap(v)), v);
  assert.ok(heldCount > 500, `${heldCount} decoded in place`);
  // Over the file limit: the same refusal.
  const big = randomBytes(3000).toString('base64');
  assert.equal(held(wrap(big), 1000), ordinary(wrap(big), 1000));
  assert.match(held(wrap(big), 1000), /holds more than the 1000 bytes/);
});

test('what needs the ordinary way is left to it', () => {
  for (const json of [
    wrap('QU\\u0042D'),
    wrap('QUJD\u00a0'),
    wrap('QU\\"JD'),
    wrap(''),
    '{"file_content":"QUJD","file_content":"QUJE"}',
    '{"file\\u005fcontent":"QUJD"}',
    '{"options":{"file_content":"QUJD"}}',
    '["file_content","QUJD"]',
    '{"file_content":123}',
  ])
    assert.equal(held(json), 'ordinary', json);
  // Found where it is: after nested objects, arrays and strings holding quotes and braces.
  const json =
    '{"options":{"a":[1,{"b":"}\\"{"}],"file_content":"no"},"s":"\\\\","file_content":"QUJD","n":-1.5e3,"t":true}';
  assert.equal(held(json), Buffer.from('ABC').toString('hex'));
});
