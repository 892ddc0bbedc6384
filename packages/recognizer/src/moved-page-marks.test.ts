// A page shrunk and moved far from where the corner windows expect it (fiducials.ts,
// `PREDICTED_REACH`; docs/cards.md, section 5, step 2): two of its marks lie across the 32 mm
// windows' inner edges, and the two found place them, each then found within 0.1 mm of where the
// page puts it. A page of which only one mark is found is still refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shrink } from './grey-image.ts';
import { candidateFrames, findFiducials } from './fiducials.ts';
import { CORNER_KEEP_OUT, fiducialCentre } from './page-frame.ts';
import { markedPage, PXMM, transform } from './testing/moved-page.ts';

test('a page shrunk to 95 % and moved 8 mm sideways and 12 mm down (once turned 1° too): the marks across the corner windows are found where the other two place them', () => {
  for (const [deg, dx, dy] of [
    [0, 8, 12],
    [0, -8, 12],
    [1, 8, 12],
  ] as const) {
    const t = transform(deg, 0.95, dx, dy);
    const img = markedPage(t);
    const found = findFiducials(img, shrink(img, 4), 4);
    assert.equal(found.length, 4, `${deg}° (${dx}, ${dy}): ${found.map((f) => f.imageCorner)}`);
    let across = 0;
    for (const f of found) {
      const m = fiducialCentre(f.imageCorner);
      const want = t.toImage(m.x, m.y);
      // A mark reaching past its corner window's inner edge (more than 32 mm from the image's sides).
      const fromX = f.imageCorner.endsWith('l') ? want.x : 210 - want.x,
        fromY = f.imageCorner.startsWith('t') ? want.y : 297 - want.y;
      if (Math.max(fromX, fromY) + 2.8 > CORNER_KEEP_OUT) across++;
      const off = Math.hypot(f.x / PXMM - want.x, f.y / PXMM - want.y);
      assert.ok(off < 0.1, `${deg}° (${dx}, ${dy}) ${f.imageCorner}: ${off.toFixed(3)} mm off`);
    }
    assert.equal(across, 2, `${deg}° (${dx}, ${dy}): two marks across their windows' edges`);
    assert.equal(candidateFrames(found)[0]!.upsideDown, false);
  }
});

test('a page of which the corner windows find one mark is refused', () => {
  // Moved 14 mm right and 16 mm down: three marks across or past their windows.
  const img = markedPage(transform(0, 0.95, 14, 16));
  const found = findFiducials(img, shrink(img, 4), 4);
  assert.ok(found.length <= 1, `${found.map((f) => f.imageCorner)}`);
  assert.deepEqual(candidateFrames(found), []);
});
