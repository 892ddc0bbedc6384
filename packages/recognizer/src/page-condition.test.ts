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
import { darkerOnAGuess, fillOnAGuess, lighterOnAGuess, localPaper, RING_MISFIT } from './local-paper.ts';
import { evidence, solidApartFromSpecks } from './mark-evidence.ts';
import { pageLevels } from './page-levels.ts';
import {
  cautious,
  localAllowance,
  measureBands,
  misregistration,
  QUALITY_LIMITS,
  refusal,
  showThroughOf,
  type PageQuality,
} from './page-quality.ts';
import { THRESHOLDS } from './mark-classifier.ts';
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
    20,
  );
  assert.ok(clean.bandsAcross < 0.02 && clean.bandsAlong < 0.02, JSON.stringify(clean));
  const across = measureBands(
    page(230, (_x, y) => 230 * (Math.abs(((y + 3) % 25) - 12) < 1.5 ? 0.85 : 1)),
    h,
    PXMM,
    noStreaks,
    flat,
    20,
  );
  assert.ok(across.bandsAcross > 0.12 && across.bandsAlong < 0.02, JSON.stringify(across));
  const along = measureBands(
    page(230, (x) => 230 * (Math.abs(((x + 3) % 30) - 15) < 2 ? 0.9 : 1)),
    h,
    PXMM,
    noStreaks,
    flat,
    20,
  );
  assert.ok(along.bandsAlong > 0.07 && along.bandsAcross < 0.02, JSON.stringify(along));
});

function paperMap(img: GreyImage) {
  return buildPaperMap(shrink(img, 4), 4, 16);
}

const good: PageQuality = {
  speckSize: 0,
  speckMeasured: 0,
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

test('the large corner mark cut into three by lines where the toner ran short is found whole, not as its middle piece', () => {
  // Two faded lines 0.3 mm wide across every mark, 1.7 mm under its top edge and 1.5 mm under
  // its centre (generator C's scratch seed 5 104 545, heavy low ink): the large square's middle
  // piece, 9 × 4.3 mm, has a small square's area.
  const cut = page(230, (x, y) => {
    for (const c of CORNERS) {
      const p = fiducialCentre(c),
        s = fiducialSize(c) / 2;
      if (Math.abs(x - p.x) <= s && Math.abs(y - p.y) <= s)
        return Math.abs(y - (p.y - s + 1.7)) < 0.15 || Math.abs(y - (p.y + 1.5)) < 0.15 ? 170 : 20;
    }
    return undefined;
  });
  const found = findFiducials(cut, shrink(cut, 4), 4);
  assert.equal(found.length, 4);
  for (const f of found) {
    const c = fiducialCentre(f.imageCorner);
    const off = Math.hypot(f.x / PXMM - c.x, f.y / PXMM - c.y);
    assert.ok(off < 0.15, `${f.imageCorner}: ${off.toFixed(2)} mm off its centre, ${f.areaMm2.toFixed(1)} mm²`);
  }
  assert.ok(found.find((f) => f.imageCorner === 'tl')!.areaMm2 > 70, 'the large square whole');
});

test('an ADF streak seven pixels wide is left out whole', () => {
  const img = page(230, (x) => (Math.abs(x * PXMM - 800.5) < 3.5 ? 120 : undefined));
  const s = findStreaks(img);
  for (let x = 797; x <= 803; x++) assert.equal(s.mask[x], 1, `column ${x}`);
  assert.equal(s.mask[780], 0);
});

test('two ADF streaks one pixel apart (two pixels and five wide) are both left out', () => {
  // As on C's tuning pages of heavy streaks at 200 dpi (card 19): the narrow one's reference
  // columns 3-4 away lay in the wide one, and it was missed.
  const img = page(230, (x) => {
    const c = Math.floor(x * PXMM);
    return c >= 800 && c <= 801 ? 150 : c >= 803 && c <= 807 ? 120 : undefined;
  });
  const s = findStreaks(img);
  for (let x = 800; x <= 807; x++) if (x !== 802) assert.equal(s.mask[x], 1, `column ${x}`);
  assert.equal(s.mask[790], 0);
  assert.equal(s.mask[815], 0);
});

test('an ADF streak 13 pixels wide at half the light is left out whole, its edges too', () => {
  // Found before only in its middle (its edge columns' references lay inside it): the edges left
  // in drew two lines through every area of the column (docs/cards.md, section 8, "Generator C,
  // fourteenth round").
  const img = page(230, (x) => {
    const c = Math.floor(x * PXMM);
    return c >= 800 && c <= 812 ? 115 : undefined;
  });
  const s = findStreaks(img);
  for (let x = 800; x <= 812; x++) assert.equal(s.mask[x], 1, `column ${x}`);
  assert.equal(s.mask[795], 0);
  assert.equal(s.mask[818], 0);
  assert.ok(Math.abs(s.gain[806]! - 0.5) < 0.02, `gain ${s.gain[806]}`);
});

test("a stripe along the feed whose edge lies between the two offsets of an area's ring: that side is read on the nearer one, and the area's part on the stripe is paper", () => {
  // The area's left ring is read 0.45 and 0.7 mm outside its outline (x = 95.9 and 95.65 mm); a
  // stripe 30 % darker from x = 95.8 to 98.5 mm covers the nearer offset and the area's left part.
  // The lightest of the two was the paper beside the stripe, the top and bottom sides' ends were
  // in it, and the patch carried a paper between the two into the area: its part on the stripe
  // measured as a patch (C's clean tuning card 4 500 000 at 150 dpi, an eraser's residue read filled).
  const img = page(230, (x, y) => {
    const q = ((x - 100) / 3.5) ** 2 + ((y - 100) / 2.2) ** 2;
    return (Math.abs(Math.sqrt(q) - 1) * 2.8 < 0.15 ? 64 : 230) * (x >= 95.8 && x < 98.5 ? 0.7 : 1);
  });
  const h = identity();
  const local = localPaper(img, h, 100, 100, 7, 4.4, PXMM, noStreaks, (g) => g, 230);
  assert.ok(local, 'the ring is read');
  assert.ok(Math.abs(local(-2.5, 0) - 161) < 8, `paper on the stripe ${local(-2.5, 0)}`);
  assert.ok(Math.abs(local(2, 0) - 230) < 8, `paper beside it ${local(2, 0)}`);
  const paper = buildPaperMap(shrink(img, 4), 4, 16);
  const plain = sampleArea(img, h, paper, 20, noStreaks, 100, 100, 7, 4.4, PXMM);
  const lv = { ...pageLevels(Array(8).fill({ ...plain, mean: 0, sd: 0.01, outline: 0.7 }), PXMM), baseline: 0 };
  const judged = evidence(sampleArea(img, h, paper, 20, noStreaks, 100, 100, 7, 4.4, PXMM, local), lv);
  assert.ok(Math.abs(judged.solid) < 0.02 && judged.blob < THRESHOLDS.emptyBlob, JSON.stringify(judged));
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

test("toner specks are counted in the margins by the page's contrast, a band is no speck", () => {
  const h = identity();
  const map = paperMap(page(230));
  const flat = (x: number, y: number) => map.level(x, y);
  // Twelve specks 0.8 mm across in the side margins, 0.42 of the contrast darker than the paper
  // (a copier's faint speck: under 0.6 of the paper, what was once counted, it is not).
  const specks = Array.from({ length: 12 }, (_, k) => ({ x: k % 2 ? 8 : 202, y: 50 + 17 * k }));
  const speckled = page(230, (x, y) =>
    specks.some((s) => Math.hypot(x - s.x, y - s.y) < 0.4) ? 230 - 0.42 * 210 : undefined,
  );
  const seen = measureBands(speckled, h, PXMM, noStreaks, flat, 20);
  assert.ok(seen.specks >= QUALITY_LIMITS.cautionSpecks, JSON.stringify(seen));
  assert.equal(cautious({ ...good, specks: seen.specks }), true);
  // The largest speck, its pixels darker than the paper by a little: 0.5 mm² drawn, its edge pixels included.
  assert.ok(seen.speckSize > 0.4 && seen.speckSize < 0.8, `largest speck ${seen.speckSize} mm²`);
  // A band 2 mm wide along the feed, 20 % darker, through the side margins: no speck.
  const banded = measureBands(
    page(230, (x) => (Math.abs(x - 8) < 1 || Math.abs(x - 201) < 1 ? 230 * 0.8 : undefined)),
    h,
    PXMM,
    noStreaks,
    flat,
    20,
  );
  assert.equal(banded.specks, 0);
  // Forty grains of dust on the glass, a pixel across and as dark as print: no speck either.
  const dusty = page(230, (x, y) => {
    const k = Math.round((y - 40) / 5);
    return k >= 0 && k < 40 && Math.abs(y - 40 - 5 * k) * PXMM < 0.5 && Math.abs(x - (k % 2 ? 8 : 202)) * PXMM < 0.5
      ? 40
      : undefined;
  });
  assert.equal(measureBands(dusty, h, PXMM, noStreaks, flat, 20).specks, 0);
});

test("a margin speck that runs on leaves the page's specks unbounded; the largest measured beside it is kept", () => {
  const h = identity();
  const map = paperMap(page(230));
  const flat = (x: number, y: number) => map.level(x, y);
  // The twelve specks of the test above, and a smear 0.6 mm wide running 5 mm down the left margin.
  const specks = Array.from({ length: 12 }, (_, k) => ({ x: k % 2 ? 8 : 202, y: 50 + 17 * k }));
  const seen = measureBands(
    page(230, (x, y) =>
      specks.some((s) => Math.hypot(x - s.x, y - s.y) < 0.4) || (Math.abs(x - 8) < 0.3 && y > 243 && y < 248)
        ? 230 - 0.42 * 210
        : undefined,
    ),
    h,
    PXMM,
    noStreaks,
    flat,
    20,
  );
  assert.equal(seen.speckSize, Number.POSITIVE_INFINITY);
  assert.ok(seen.speckMeasured > 0.4 && seen.speckMeasured < 0.8, `largest measured ${seen.speckMeasured} mm²`);
});

test('a speck on an erasure is left out of the mean a fill is told by; a fill keeps its mean', () => {
  const cols = 30,
    rows = 20;
  const area = (at: (i: number, j: number) => number) => {
    const grid = new Float32Array(cols * rows),
      inner = new Uint8Array(cols * rows).fill(1);
    let sum = 0;
    for (let j = 0; j < rows; j++)
      for (let i = 0; i < cols; i++) {
        grid[j * cols + i] = at(i, j);
        sum += at(i, j);
      }
    return { grid, cols, rows, step: 0.2, inner, mean: sum / (cols * rows), sd: 0, outline: 0.7 };
  };
  // Residue at 0.14 with a speck of 40 samples (1.6 mm²) at 0.65: its mean crosses 0.155.
  const speck = area((i, j) => (Math.hypot(i - 20, j - 10) < 3.6 ? 0.65 : 0.14));
  assert.ok(speck.mean >= THRESHOLDS.filledSolid, `mean ${speck.mean}`);
  assert.ok(solidApartFromSpecks(speck, 0) < THRESHOLDS.filledSolid);
  // Light pencil at 0.22 with its grain (±0.08): the same mean.
  const pencil = area((i, j) => 0.22 + 0.08 * Math.sin(i * 1.7 + j * 2.3));
  assert.ok(Math.abs(solidApartFromSpecks(pencil, 0) - pencil.mean) < 0.005);
});

test("a shadow's edge across an area diagonally: its ring misfits and a fill told by a patch there is uncertain; a band does not misfit", () => {
  const h = identity();
  // A shadow (half the light) whose 3 mm edge runs diagonally through an empty area at (100, 100).
  const shade = (x: number, y: number) => {
    const s = Math.min(1, Math.max(0, (x - 100 + (y - 100) + 1.5) / 3));
    return 230 * (1 - 0.5 * s * s * (3 - 2 * s));
  };
  const outline = (x: number, y: number) =>
    Math.abs(Math.sqrt(((x - 100) / 3.5) ** 2 + ((y - 100) / 2.2) ** 2) - 1) * 2.8 < 0.15;
  const shadowed = page(230, (x, y) => (outline(x, y) ? 64 : shade(x, y)));
  const ring = localPaper(shadowed, h, 100, 100, 7, 4.4, PXMM, noStreaks, (g) => g, 230);
  assert.ok(ring);
  const range = 172 - 20;
  assert.ok(ring.misfit / range >= RING_MISFIT, `misfit ${ring.misfit / range}`);
  // A band along the feed across the same area: the patch inside is exact, no misfit.
  const banded = page(230, (x, y) => (outline(x, y) ? 64 : Math.abs(x - 99) < 1.5 ? 184 : undefined));
  const bandRing = localPaper(banded, h, 100, 100, 7, 4.4, PXMM, noStreaks, (g) => g, 230);
  assert.ok(bandRing);
  assert.ok(bandRing.misfit / 210 < 0.05, `band misfit ${bandRing.misfit / 210}`);
  // What the recognizer does with it: a patch without a stroke, on a mean under 0.17, rests on a guess.
  const patch = { solid: 0.08, peak: 0.23, stroke: 0, cover: 0, blob: 9.8, blobContrast: 0.23 };
  assert.equal(fillOnAGuess(patch, ring.misfit / range, THRESHOLDS.filledStroke), true);
  assert.equal(fillOnAGuess(patch, bandRing.misfit / 210, THRESHOLDS.filledStroke), false);
  assert.equal(fillOnAGuess({ ...patch, stroke: 6.7, solid: 0.5 }, 0.5, THRESHOLDS.filledStroke), false);
  assert.equal(fillOnAGuess({ ...patch, solid: 0.2 }, 0.5, THRESHOLDS.filledStroke), false);
});

test("a blank back on the scanner's dark backing, under a shadow that reaches the image's border, is blank; with print on it, it is not", () => {
  // The backing, 4 mm along every edge of the image, and a shadow over the lower left as dark as
  // backing (the blank test then takes most of the image for backing and judges it whole).
  const ground = (x: number, y: number) => (x < 4 || x > 206 || y < 4 || y > 293 ? 50 : x + 0.4 * y < 120 ? 110 : 235);
  assert.equal(isBlank(shrink(page(235, ground), 4)), true);
  const printed = page(235, (x, y) =>
    y > 120 && y < 180 && Math.floor(y) % 10 < 2 && x > 60 && x < 180 && Math.floor(x) % 3 === 0 ? 40 : ground(x, y),
  );
  assert.equal(isBlank(shrink(printed, 4)), false);
});

test('a page whose printed outlines are not where its corner marks place them is refused with the reason', () => {
  // Eight empty areas' outlines (7 × 4.4 mm, 0.3 mm wide), measured where they are and 1 mm off.
  const centres = Array.from({ length: 8 }, (_, k) => ({ x: 40 + 18 * k, y: 100 }));
  const img = page(230, (x, y) =>
    centres.some((c) => Math.abs(Math.sqrt(((x - c.x) / 3.5) ** 2 + ((y - c.y) / 2.2) ** 2) - 1) * 2.8 < 0.15)
      ? 40
      : undefined,
  );
  const h = identity();
  const paper = paperMap(img);
  const levelsAt = (dy: number) =>
    pageLevels(
      centres.map((c) => sampleArea(img, h, paper, 20, noStreaks, c.x, c.y + dy, 7, 4.4, PXMM)),
      PXMM,
    );
  const placed = levelsAt(0);
  assert.equal(misregistration(placed), null, JSON.stringify(placed));
  const off = levelsAt(1);
  assert.match(
    misregistration(off) ?? '',
    /printed outlines are not where the corner marks place them/,
    JSON.stringify(off),
  );
});

test('a blank back on a backing about half as light as the paper, which noise splits into backing and islands cut off from the border, is blank; with print on it, it is not', () => {
  // The backing, 5 mm along the long edges, its grey either side of half the paper level (112
  // and 134 on paper at 232) in 2 mm steps down the page: its outermost millimetre dark in one
  // step of three, its inner 3 mm in another, so the dark islands there touch the border only
  // through the lighter backing.
  const step = (y: number) => Math.floor(y / 2) % 3;
  const strip = (x: number, y: number) => {
    const d = Math.min(x, 210 - x);
    if (d >= 5) return undefined;
    return (d < 1 ? step(y) === 1 : d >= 2 && step(y) === 0) ? 112 : 134;
  };
  assert.equal(isBlank(shrink(page(232, strip), 4)), true);
  const printed = page(232, (x, y) =>
    y > 120 && y < 180 && Math.floor(y) % 10 < 2 && x > 60 && x < 180 && Math.floor(x) % 3 === 0 ? 40 : strip(x, y),
  );
  assert.equal(isBlank(shrink(printed, 4)), false);
});

test("a cast shadow's edge across the identification strip: the strip is read against the paper above each column", async () => {
  const { planTemplate } = await import('./template-pdf.ts');
  const { createLayoutSet } = await import('./layout-store.ts');
  const { recognizeGrey } = await import('./page-recognizer.ts');
  const { decodeGrey } = await import('./grey-image.ts');
  const { fillCard } = await import('./synthetic/filled-card.ts');
  const { renderScan } = await import('./synthetic/render-scan.ts');
  const { mulberry32 } = await import('./synthetic/random.ts');
  const { layout, cards } = await planTemplate({
    id: 'strip-shadow',
    qrcode: 'https://example.org/strip-shadow',
    student_number: { type: 'bubbles', digits: 4 },
    chapters: [{ areas: 12 }],
  });
  const side = fillCard(layout, cards[0]!, mulberry32(7), {
    fillRate: 0.4,
    filled: ['pen'],
    emptyMarks: [],
    emptyMarkRate: 0,
    doubleDigitRate: 0,
    studentNumberKinds: ['pen'],
  }).sides[0]!;
  const img = await decodeGrey(
    await renderScan(side.ops, side.marks, { dpi: 150, noise: 2, jpegQuality: 90, seed: 3 }),
  );
  const pxmm = img.width / PAGE.width;
  // Half the light left of a line through the strip's left third (x 90 mm at its top, leaning
  // 0.3 mm per mm down), with a 2 mm soft edge: the paper above the strip's middle and right end
  // stays lit, the strip's left cells lie in the shadow.
  const shadowed = (dark: number) => {
    const data = new Uint8Array(img.data);
    for (let y = 0; y < img.height; y++)
      for (let x = 0; x < img.width; x++) {
        const d = x / pxmm - (90 + 0.3 * (y / pxmm - 275));
        const k = 1 - dark * Math.min(1, Math.max(0, (1 - d) / 2));
        data[y * img.width + x] = Math.round(data[y * img.width + x]! * k);
      }
    return { ...img, data };
  };
  const layouts = createLayoutSet([layout]);
  assert.equal((await recognizeGrey(img, layouts)).status, 'ok');
  const r = await recognizeGrey(shadowed(0.5), layouts);
  assert.equal(r.status, 'ok', JSON.stringify({ ...r, areas: undefined, evidence: undefined }));
});

test("a shadow's edge above the content's middle (page y 32 mm, where the first row of areas may lie) makes the page judged against rings of paper", () => {
  // The paper map under a cast shadow over the sheet's top 32 mm (a sharp edge across the whole
  // width): the steepest steps of the paper lie between y 30 and 40 mm. On generator C's tuning
  // pages (heavy shadows, 200 dpi) such an edge ran diagonally through a row of areas near the
  // top of the content and under the title, where the grid of the paper's steps did not reach:
  // three empty areas read filled.
  const h = identity();
  const shadowTop = (_x: number, y: number) => (y / PXMM < 32 ? 140 : 230);
  const q = measureBands(page(230), h, PXMM, noStreaks, shadowTop, 20);
  assert.ok(q.steep >= QUALITY_LIMITS.localSteep, JSON.stringify(q));
  assert.ok(localAllowance(q) > 0);
});

test("a shadow's edge down the side margin, only its tail over the first column of areas, makes the page judged against rings of paper", () => {
  // The paper map under a cast shadow over the sheet's left edge, its edge in the side margin
  // (dark to x 9 mm, lit from 16 mm) and a light tail over the content (up to x 40 mm): on the
  // grid of the content (from x 20 mm) the steepest step is under 0.04, under the limit. On a
  // scratch page of generator C's heavy shadows at 300 dpi such an edge (a step of 0.06 on the
  // grid) left the first column of areas (x 21.5 mm) judged against the paper map, which the
  // edge's tail made too light: an eraser's residue and two empty areas read filled
  // (docs/cards.md, section 8, "Generator C, eighth round").
  const h = identity();
  const shadowLeft = (x: number, _y: number) => {
    const u = x / PXMM;
    return u < 9 ? 140 : u < 16 ? 140 + (70 * (u - 9)) / 7 : u < 40 ? 210 + (20 * (u - 16)) / 24 : 230;
  };
  const q = measureBands(page(230), h, PXMM, noStreaks, shadowLeft, 20);
  assert.ok(q.steep >= QUALITY_LIMITS.localSteep, JSON.stringify(q));
  assert.ok(localAllowance(q) > 0);
  // The same edge down the right margin (mirrored).
  const shadowRight = (x: number, y: number) => shadowLeft(W - x, y);
  const r = measureBands(page(230), h, PXMM, noStreaks, shadowRight, 20);
  assert.ok(r.steep >= QUALITY_LIMITS.localSteep, JSON.stringify(r));
  // A paper as even as a scanner's falloff leaves the page with its paper map.
  const falloff = (x: number, _y: number) => 230 - (0.02 * 230 * x) / PXMM / 10;
  assert.equal(localAllowance(measureBands(page(230), h, PXMM, noStreaks, falloff, 20)), 0);
});

test("on a page judged against its rings, the ring's guess may be off either way: a faint fill it lightened is not called empty, a shadow it left in is not called filled", () => {
  // C's tuning seed 5 002 513: a faint fill measured 0.080 on a ring misfitting by 0.104; as dark
  // as that guess may hide, it lies among the page's faint fills.
  const faint = { solid: 0.0805, peak: 0.132, stroke: 0, cover: 0, blob: 0, blobContrast: 0 };
  const darker = darkerOnAGuess(faint, 0.104);
  assert.ok(darker && darker.solid > 0.13, JSON.stringify(darker));
  assert.equal(darkerOnAGuess(faint, 0), null, 'a ring that fits hides nothing');
  assert.equal(darkerOnAGuess({ ...faint, solid: 0.01 }, 0.6), null, 'paper white beside a stray mark is no grey');
  // C's scratch seed 6 108 535: an empty area under a shadow's edge measured 0.203 on a ring
  // misfitting by 0.663 (a guess); half that misfit lighter it is no fill. A stroke still tells
  // one, and a ring that is no guess leaves the mean as it is.
  const shadowed = { solid: 0.203, peak: 0.291, stroke: 0, cover: 0, blob: 6.5, blobContrast: 0.123 };
  const lighter = lighterOnAGuess(shadowed, 0.663, THRESHOLDS.filledStroke);
  assert.ok(lighter && lighter.solid < 0, JSON.stringify(lighter));
  assert.equal(lighterOnAGuess({ ...shadowed, stroke: 6 }, 0.663, THRESHOLDS.filledStroke), null);
  assert.equal(lighterOnAGuess(shadowed, RING_MISFIT - 0.01, THRESHOLDS.filledStroke), null);
});

test("a narrow band along the feed taken for an ADF streak under one side of an area's ring: the ring is still read, and the area is empty", () => {
  // A band 1.5 mm wide, 18 % darker, from x = 95.6 to 97.1 mm: the area's left ring (0.45-0.7 mm
  // outside its outline at x = 96.35) lies wholly on it; a second, wider band from x = 101 mm on
  // crosses the area's right part (C's scratch seed 5 102 503, areas 1.20-1.80).
  const dark = (x: number) => ((x >= 95.6 && x < 97.1) || x >= 101 ? 0.82 : 1);
  const img = page(230, (x, y) => {
    const q = ((x - 100) / 3.5) ** 2 + ((y - 100) / 2.2) ** 2;
    return (Math.abs(Math.sqrt(q) - 1) * 2.8 < 0.15 ? 64 : 230) * dark(x);
  });
  const h = identity();
  const streaks = new Uint8Array(W);
  for (let x = Math.ceil(95.6 * PXMM); x < Math.floor(97.1 * PXMM); x++) streaks[x] = 1;
  const local = localPaper(img, h, 100, 100, 7, 4.4, PXMM, streaks, (g) => g, 225);
  assert.ok(local, 'the ring is read although its left side lies on the streak');
  const paper = buildPaperMap(shrink(img, 4), 4, 16);
  const plain = sampleArea(img, h, paper, 20, streaks, 100, 100, 7, 4.4, PXMM);
  const lv = { ...pageLevels(Array(8).fill({ ...plain, mean: 0, sd: 0.01, outline: 0.7 }), PXMM), baseline: 0 };
  const judged = evidence(sampleArea(img, h, paper, 20, streaks, 100, 100, 7, 4.4, PXMM, local), lv);
  // Against the paper map the band's part inside read as a patch of some 4 mm²; a sample's sliver
  // at its sharp edge is all that is left.
  assert.ok(Math.abs(judged.solid) < 0.01 && judged.blob < THRESHOLDS.emptyBlob, JSON.stringify(judged));
  const mapped = evidence(plain, lv);
  assert.ok(mapped.blob >= 2 && mapped.blobContrast > 0.12, JSON.stringify(mapped));
});
