// Corner marks cut by the image's border (cut-mark.ts; docs/cards.md, section 5, step 2): a
// page enlarged by 5 %, turned by 2.5° about its centre and moved, drawn here, loses part of two
// of its marks past the image's edges; each is found whole again, its centre where the page puts
// it. A mark cut by two borders at once, or with too little of it left, is not taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shrink } from './grey-image.ts';
import { cutMark } from './cut-mark.ts';
import { candidateFrames, findFiducials } from './fiducials.ts';
import { fiducialCentre } from './page-frame.ts';
import { markedPage, pastTheEdge, PXMM, transform } from './testing/moved-page.ts';

test('pages enlarged 5 %, turned 2.5° and moved: the marks cut by each border are found whole, each within 0.1 mm of where the page puts it', () => {
  // Cut: the large top-left mark at the left border and the top-right at the top; the bottom
  // marks at the left and bottom borders; at the bottom and right borders.
  for (const [deg, dx, dy] of [
    [-2.5, -3, -3],
    [2.5, -4, 4],
    [-2.5, 3, 3],
  ] as const) {
    const t = transform(deg, 1.05, dx, dy);
    const past = pastTheEdge(t);
    assert.equal(past.filter((p) => p > 1.5).length, 2, `two marks cut (${past.map((p) => p.toFixed(1))})`);
    const img = markedPage(t);
    const found = findFiducials(img, shrink(img, 4), 4);
    assert.equal(found.length, 4, `${deg}° (${dx}, ${dy}): ${found.map((f) => f.imageCorner)}`);
    for (const f of found) {
      // The image corner each mark lies in is its page corner (the page is upright).
      const m = fiducialCentre(f.imageCorner);
      const want = t.toImage(m.x, m.y);
      const off = Math.hypot(f.x / PXMM - want.x, f.y / PXMM - want.y);
      assert.ok(
        off < 0.1,
        `${deg}° (${dx}, ${dy}) ${f.imageCorner}: ${off.toFixed(3)} mm off, ${f.areaMm2.toFixed(1)} mm²`,
      );
    }
    // The large one is still told from the small ones: the page is read upright.
    assert.equal(candidateFrames(found)[0]!.upsideDown, false);
  }
});

test('a mark cut by two borders at once, or with under a third of it left in the image, is not taken', () => {
  // Shifted up and left: the top-left mark lies across the image's corner.
  const corner = transform(0, 1, -12.5, -12.5);
  const img = markedPage(corner);
  const tl = findFiducials(img, shrink(img, 4), 4).find((f) => f.imageCorner === 'tl');
  assert.equal(tl, undefined);
  // Shifted left: 2 of the large mark's 9 mm left in the image.
  const shifted = markedPage(transform(0, 1, -17.5, 0));
  const box = { x0: 0, y0: Math.floor(10 * PXMM), x1: Math.ceil(2.5 * PXMM), y1: Math.ceil(20 * PXMM) };
  assert.equal(cutMark(shifted, box, PXMM), null);
  // With half of it left, it is found, its centre on the image's edge.
  const half = markedPage(transform(0, 1, -15, 0));
  const m = cutMark(
    half,
    { x0: 0, y0: Math.floor(10 * PXMM), x1: Math.ceil(4.5 * PXMM), y1: Math.ceil(20 * PXMM) },
    PXMM,
  );
  assert.ok(m, 'found');
  assert.ok(Math.abs(m.x / PXMM) < 0.1 && Math.abs(m.y / PXMM - 15) < 0.1, `${m.x / PXMM}, ${m.y / PXMM}`);
  assert.ok(Math.abs(m.side - 9) < 0.2, `side ${m.side}`);
});
