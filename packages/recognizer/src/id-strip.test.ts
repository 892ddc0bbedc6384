import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeSideIdentity,
  decodeStudentIdentity,
  encodeSideIdentity,
  encodeStudentIdentity,
  ID_BITS,
  STUDENT_BITS,
  studentKey,
} from './id-strip.ts';
import { apply, solveHomography } from './homography.ts';

test('side identity round-trips and any single flipped bit is rejected', () => {
  const id = { layoutKey: 0xd56a8a26, sheet: 3, side: 'back' as const };
  const bits = encodeSideIdentity(id);
  assert.equal(bits.length, ID_BITS);
  assert.deepEqual(decodeSideIdentity(bits), id);
  for (let i = 0; i < bits.length; i++) {
    const b = [...bits];
    b[i] = 1 - b[i]!;
    assert.equal(decodeSideIdentity(b), null, `bit ${i}`);
  }
});

test('all-white, all-black and reversed strips never decode', () => {
  assert.equal(decodeSideIdentity(new Array(ID_BITS).fill(0)), null);
  assert.equal(decodeSideIdentity(new Array(ID_BITS).fill(1)), null);
  // An upside-down page reads the strip backwards; the CRC must catch it.
  let accepted = 0;
  for (let k = 0; k < 200; k++) {
    const bits = encodeSideIdentity({
      layoutKey: (k * 2654435761) >>> 0,
      sheet: 1 + (k % 5),
      side: k % 2 ? 'back' : 'front',
    });
    if (decodeSideIdentity([...bits].reverse())) accepted++;
  }
  assert.ok(accepted <= 2, `${accepted} reversed strips decoded`);
});

test('homography maps the four points exactly and a rotation in between', () => {
  const src = [
    { x: 15, y: 15 },
    { x: 195, y: 15 },
    { x: 15, y: 282 },
    { x: 195, y: 282 },
  ];
  const a = 0.05,
    s = 7.87;
  const rot = (p: { x: number; y: number }) => ({
    x: s * (Math.cos(a) * p.x - Math.sin(a) * p.y) + 40,
    y: s * (Math.sin(a) * p.x + Math.cos(a) * p.y) + 12,
  });
  const h = solveHomography(src, src.map(rot))!;
  const q = apply(h, 100, 150),
    e = rot({ x: 100, y: 150 });
  assert.ok(Math.abs(q.x - e.x) < 1e-6 && Math.abs(q.y - e.y) < 1e-6);
});

test('student identity: round trip, blank strip, damaged strip, another card', () => {
  const layoutKey = 0x6cfd6b16;
  const key = studentKey('S-2024-0931');
  assert.equal(key, studentKey('S-2024-0931'));
  assert.notEqual(key, studentKey('S-2024-0932'));
  const bits = encodeStudentIdentity(layoutKey, key);
  assert.equal(bits.length, STUDENT_BITS);
  assert.equal(decodeStudentIdentity(bits, layoutKey), key);
  assert.equal(
    decodeStudentIdentity(new Array(STUDENT_BITS).fill(0), layoutKey),
    undefined,
    'blank: not a personalised card',
  );
  assert.equal(decodeStudentIdentity(new Array(STUDENT_BITS).fill(1), layoutKey), null);
  for (let i = 0; i < bits.length; i++) {
    const b = [...bits];
    b[i] = 1 - b[i]!;
    assert.equal(decodeStudentIdentity(b, layoutKey), null, `bit ${i}`);
  }
  // The CRC covers the layout key: the strip of another card's layout does not check.
  assert.equal(decodeStudentIdentity(bits, layoutKey ^ 1), null);
});
