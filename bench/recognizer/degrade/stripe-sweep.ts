// Stripes along the feed beyond generator C's range: a sharp-edged dark column of the scan (a
// dirty patch of a sheet-fed scanner's glass or calibration strip, a failing segment of its
// sensor) from 0.3 to 8 mm wide and from 0.5 to 0.88 of the light, laid over C's tuning cards
// (`tune.ts` renders them into .tmp/degrade-cache/ first) at six places across the page, each side
// read alone. C's own streaks are at most five pixels wide and its bands along the feed at most
// 20 % deep; this sweep is what found the silent errors of docs/cards.md, section 8, "Generator
// C, fourteenth round". Never on the evaluation's cards.
//   npx tsx bench/recognizer/degrade/stripe-sweep.ts <dpi> [cards] [--offset=N] [--widths=mm,..] [--gains=g,..]
import { existsSync, readFileSync } from 'node:fs';
import { decodeGrey } from '../../../packages/recognizer/src/grey-image.ts';
import { INDEPENDENT_CARDS } from '../independent/cards.ts';
import { loadRecognizer } from '../under-test.ts';
import { CLASS_STRENGTHS } from './classes.ts';
import { DEGRADE_TUNING_SEED_BASE } from './run.ts';

const [dpiArg, cardsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dpi = Number(dpiArg ?? '150');
const cards = Number(cardsArg ?? '2');
const offset = Number(option('offset') ?? '0');
const widths = (option('widths') ?? '0.3,1,1.8,2,2.2,2.6,3,4,6,8').split(',').map(Number);
const gains = (option('gains') ?? '0.5,0.6,0.7,0.75,0.8,0.88').split(',').map(Number);
/** Where the stripe's left edge lies, mm from the page's left: through each column of areas. */
const PLACES = [37, 61, 83, 109, 131, 157];

const rec = await loadRecognizer();
const layouts = rec.createLayoutSet(
  await Promise.all(INDEPENDENT_CARDS.map(async (d) => (await rec.planTemplate(d)).layout)),
);
const dir = new URL('../../../.tmp/degrade-cache/', import.meta.url).pathname;
const clean = CLASS_STRENGTHS.findIndex(([c]) => c === 'clean');
const seeds = Array.from(
  { length: cards },
  (_, i) => DEGRADE_TUNING_SEED_BASE + dpi * 10_000 + clean * 500 + i + offset,
);
const missing = seeds.filter((s) => !existsSync(`${dir}${s}.json`));
if (missing.length > 0) {
  console.error(`render the clean cards first: tune.ts ${cards} ${dpi} clean${offset ? ` --offset=${offset}` : ''}`);
  process.exit(2);
}
const sides = await Promise.all(
  seeds.flatMap((seed) => {
    const card = JSON.parse(readFileSync(`${dir}${seed}.json`, 'utf8'));
    return card.sides
      .filter((s: { truth: unknown }) => s.truth !== null)
      .map(async (s: { jpeg: string; truth: Array<{ filled: boolean; kind: string }> }) => ({
        seed,
        truth: s.truth,
        img: await decodeGrey(new Uint8Array(Buffer.from(s.jpeg, 'base64'))),
      }));
  }),
);

let silentAll = 0;
for (const gain of gains)
  for (const mm of widths) {
    let n = 0,
      uncertain = 0,
      wrong = 0,
      unread = 0;
    const seen: string[] = [];
    for (const { seed, truth, img } of sides) {
      const pxmm = img.width / 210;
      const w = Math.max(1, Math.round(mm * pxmm));
      for (const at of PLACES) {
        const data = new Uint8Array(img.data);
        const x0 = Math.round(at * pxmm);
        for (let y = 0; y < img.height; y++)
          for (let x = x0; x < Math.min(img.width, x0 + w); x++)
            data[y * img.width + x] = Math.round(data[y * img.width + x]! * gain);
        const r = await rec.recognizeGrey({ ...img, data }, layouts, {});
        n += truth.length;
        if (r.status !== 'ok') {
          unread++;
          uncertain += truth.length;
          continue;
        }
        for (const [i, a] of r.areas.entries()) {
          if (a.state === 'uncertain') uncertain++;
          else if ((a.state === 'filled') !== truth[i]!.filled) {
            wrong++;
            seen.push(`seed ${seed} at ${at} mm: ${truth[i]!.kind} read ${a.state} (area ${a.chapter}.${a.index})`);
          }
        }
      }
    }
    silentAll += wrong;
    console.log(
      `${dpi} dpi, stripe ${String(mm).padStart(3)} mm at ${gain.toFixed(2)} of the light: ${n} areas, ${uncertain} uncertain, ${wrong} WRONG, ${unread} sides refused`,
    );
    for (const l of seen.slice(0, 5)) console.log(`    ${l}`);
  }
console.log(`silent errors: ${silentAll}`);
