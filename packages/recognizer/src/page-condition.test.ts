// The page's condition and what it changes, on images drawn here (no scanner model): areas
// judged against their own ring of paper under a band, bands measured in the margins, the
// refusal of a page too degraded, corner marks found under a shadow and through a line where
// the toner ran short, wide ADF streaks, a blank back under a shadow (docs/cards.md, section 5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GreyImage } from './grey-image.ts';
import { shrink } from './grey-image.ts';
import { solveHomography, type Homography } from './homography.ts';
import { buildPaperMap } from './paper-map.ts';
import { sampleArea } from './area-sampler.ts';
import { localPaper } from './local-paper.ts';
import { evidence } from './mark-evidence.ts';
import { pageLevels } from './page-levels.ts';
import { cautious, localAllowance, measureBands, refusal, showThroughOf, type PageQuality } from './page-quality.ts';
import { findFiducials } from './fiducials.ts';
import { findStreaks } from './streaks.ts';
import { isBlank } from './blank-page.ts';
import { CORNERS, fiducialCentre, fiducialSize, PAGE } from './page-frame.ts';

const DPI = 200,
  PXMM = DPI / 25.4;
const W = Math.round(PAGE.width * PXMM),
  H = Math.round(PAGE.height * PXMM);

/** A page of paper at `paper`, with `draw(xMm, yMm)` giving each pixel's grey (or undefined for paper). */
function page(paper: number, draw?: (x: number, y: number) => number | undefined): GreyImage {
  const data = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const v = draw?.((x + 0.5) / PXMM, (y + 0.5) / PXMM);
      data[y * W + x] = v === undefined ? paper : Math.max(0, Math.min(255, Math.round(v)));
    }
  return { data, width: W, height: H };
}

/** The four corner marks, black (20) on whatever `ground` gives there. */
function withMarks(ground: (x: number, y: number) => number, mark = 20): (x: number, y: number) => number {
  return (x, y) => {
    for (const c of CORNERS) {
      const p = fiducialCentre(c),
        s = fiducialSize(c) / 2;
      if (Math.abs(x - p.x) <= s && Math.abs(y - p.y) <= s) return Math.min(ground(x, y), mark);
    }
    return ground(x, y);
  };
}

const identity = (): Homography =>
  solveHomography(
    [
      { x: 0, y: 0 },
      { x: 210, y: 0 },
      { x: 0, y: 297 },
      { x: 210, y: 297 },
    ],
    [
      { x: 0, y: 0 },
      { x: W, y: 0 },
      { x: 0, y: H },
      { x: W, y: H },
    ],
  )!;

/** A horizontal band 1.6 mm wide, 20 % darker, across the page at y = 100 mm. */
const band = (y: number) => (Math.abs(y - 100) < 0.8 ? 0.8 : 1);
const noStreaks = new Uint8Array(W);

test('an empty area under a narrow band: dark against the paper map, empty against its own ring of paper', () => {
  const img = page(230, (x, y) => {
    const g = 230 * band(y);
    // The area's printed outline: an ellipse 7 × 4.4 mm at (100, 100), 0.3 mm wide.
    const q = ((x - 100) / 3.5) ** 2 + ((y - 100) / 2.2) ** 2;
    return Math.abs(Math.sqrt(q) - 1) * 2.8 < 0.15 ? 64 : g;
  });
  const h = identity();
  const thumb = shrink(img, 4);
  const paper = buildPaperMap(thumb, 4, 16);
  const plain = sampleArea(img, h, paper, 20, noStreaks, 100, 100, 7, 4.4, PXMM);
  const lv = pageLevels(Array(8).fill({ ...plain, mean: 0, sd: 0.01, outline: 0.7 }), PXMM);
  const banded = evidence(plain, { ...lv, baseline: 0 });
  // Without the ring, the band is a patch across the area as dark as a light half fill.
  assert.ok(banded.blob >= 2 && banded.blobContrast > 0.12, JSON.stringify(banded));
  const local = localPaper(img, h, 100, 100, 7, 4.4, PXMM, noStreaks, (g) => g, 230);
  assert.ok(local, 'the ring is read');
  const judged = evidence(sampleArea(img, h, paper, 20, noStreaks, 100, 100, 7, 4.4, PXMM, local), {
    ...lv,
    baseline: 0,
  });
  assert.ok(Math.abs(judged.solid) < 0.01 && judged.blob === 0, JSON.stringify(judged));
  // Where the ring agrees with the paper map, the map is kept.
  assert.equal(
    localPaper(page(230), h, 100, 100, 7, 4.4, PXMM, noStreaks, (g) => g, 230),
    null,
  );
});

test('bands are measured in the bare margins, across and along the feed; a clean page has none', () => {
  const h = identity();
  const map = paperMap(page(230));
  const flat = (x: number, y: number) => map.level(x, y);
  const clean = measureBands(
    page(230, (x, y) => 230 + ((Math.floor(x * 7 + y * 13) % 5) - 2)),
    h,
    PXMM,
    noStreaks,
    flat,
  );
  assert.ok(clean.bandsAcross < 0.02 && clean.bandsAlong < 0.02, JSON.stringify(clean));
  const across = measureBands(
    page(230, (_x, y) => 230 * (Math.abs(((y + 3) % 25) - 12) < 1.5 ? 0.85 : 1)),
    h,
    PXMM,
    noStreaks,
    flat,
  );
  assert.ok(across.bandsAcross > 0.12 && across.bandsAlong < 0.02, JSON.stringify(across));
  const along = measureBands(
    page(230, (x) => 230 * (Math.abs(((x + 3) % 30) - 15) < 2 ? 0.9 : 1)),
    h,
    PXMM,
    noStreaks,
    flat,
  );
  assert.ok(along.bandsAlong > 0.07 && along.bandsAcross < 0.02, JSON.stringify(along));
});

function paperMap(img: GreyImage) {
  return buildPaperMap(shrink(img, 4), 4, 16);
}

const good: PageQuality = {
  bandsAcross: 0.01,
  bandsAlong: 0.01,
  uneven: 0.05,
  steep: 0.01,
  contrast: 200,
  blurMm: 0.2,
  blockiness: 1.1,
  specks: 0,
  showThrough: 0.05,
  local: 0,
};

test('a page too degraded is refused with the reason; a good one is not', () => {
  assert.equal(refusal(good), null);
  assert.match(refusal({ ...good, contrast: 22 })!, /contrast between paper and print is 22 grey levels/);
  assert.match(refusal({ ...good, bandsAlong: 0.5 })!, /bands 50 % darker than the paper along the feed/);
});

test("areas are judged against their ring only on a banded page or under a shadow's edge; specks and strong show-through call for caution", () => {
  assert.equal(localAllowance(good), 0, 'a smooth falloff stays with the paper map');
  assert.equal(localAllowance({ ...good, uneven: 0.22, steep: 0.03 }), 0);
  assert.ok(localAllowance({ ...good, bandsAcross: 0.15 }) > 0.2);
  assert.ok(localAllowance({ ...good, uneven: 0.4, steep: 0.2 }) >= 0.4);
  assert.equal(cautious(good), false);
  assert.equal(cautious({ ...good, specks: 0.5 }), true);
  assert.equal(cautious({ ...good, showThrough: 0.25 }), true);
});

test("the other side's large corner mark showing through around this side's top-right one is measured", () => {
  const h = identity();
  const tr = fiducialCentre('tr');
  const through = (s: number) =>
    page(
      230,
      withMarks((x, y) => (Math.max(Math.abs(x - tr.x), Math.abs(y - tr.y)) <= 4.5 ? 230 - s * 210 : 230)),
    );
  assert.ok(showThroughOf(through(0), h, tr.x, tr.y, 20) < 0.02);
  const st = showThroughOf(through(0.25), h, tr.x, tr.y, 20);
  assert.ok(Math.abs(st - 0.25) < 0.03, `measured ${st}`);
});

test('corner marks are found under a cast shadow across a corner and through a line where the toner ran short', () => {
  // A shadow over the left third of the page, its edge through the top-left and bottom-left corner windows.
  const shadowed = page(
    240,
    withMarks((x) => (x < 18 ? 105 : 240), 15),
  );
  const thumb = shrink(shadowed, 4);
  assert.equal(findFiducials(shadowed, thumb, 4).length, 4);
  // Low contrast and a 1 mm line across every mark where the toner ran short.
  const faded = page(200, (x, y) => {
    for (const c of CORNERS) {
      const p = fiducialCentre(c),
        s = fiducialSize(c) / 2;
      if (Math.abs(x - p.x) <= s && Math.abs(y - p.y) <= s) return Math.abs(y - p.y - 0.7) < 0.5 ? 185 : 120;
    }
    return undefined;
  });
  assert.equal(findFiducials(faded, shrink(faded, 4), 4).length, 4);
});

test('an ADF streak seven pixels wide is left out whole', () => {
  const img = page(230, (x) => (Math.abs(x * PXMM - 800.5) < 3.5 ? 120 : undefined));
  const s = findStreaks(img);
  for (let x = 797; x <= 803; x++) assert.equal(s.mask[x], 1, `column ${x}`);
  assert.equal(s.mask[780], 0);
});

test('a blank back under a cast shadow is blank; a page with print on it under the same shadow is not', () => {
  const shade = (x: number, y: number) => (x + 0.4 * y < 120 ? 110 : 235);
  assert.equal(isBlank(shrink(page(235, shade), 4)), true);
  // Six lines of print 150 mm long (about 1 % of the sheet dark), half of them in the shadow.
  const printed = page(235, (x, y) =>
    y > 120 && y < 180 && Math.floor(y) % 10 < 2 && x > 30 && x < 180 && Math.floor(x) % 3 === 0 ? 40 : shade(x, y),
  );
  assert.equal(isBlank(shrink(printed, 4)), false);
});
