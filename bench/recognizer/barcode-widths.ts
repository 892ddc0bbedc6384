// Code128 read rate by module width (not part of `npm run bench`): personalised barcode cards of
// generator A's tuning seeds, forced to one module width each, scanned with the bench's hard
// effects at one resolution and read by recognizePage. Wrong reads are the ones that matter:
// a wrong student number is worse than none.
//   npx tsx bench/recognizer/barcode-widths.ts [dpi=100] [cards=100] [widths=0.4,0.5,0.6]
import { createLayoutSet, planTemplate, recognizePage } from '../../packages/recognizer/src/index.ts';
import { BARCODE } from '../../packages/recognizer/src/layout.ts';
import { renderScan } from '../../packages/recognizer/src/synthetic/render-scan.ts';
import { BARCODE_CARD, effectsFor, studentIdFor, TUNING_SEED_BASE } from './bench-card.ts';

const dpi = Number(process.argv[2] ?? 100),
  n = Number(process.argv[3] ?? 100);
for (const module of (process.argv[4] ?? '0.4,0.5,0.6').split(',').map(Number)) {
  // One width only, whatever the id's length would choose (a test hook on the template's list).
  (BARCODE as { modules: readonly number[] }).modules = [module];
  let read = 0,
    wrong = 0,
    unread = 0,
    refused = 0;
  for (let i = 0; i < n; i++) {
    const seed = TUNING_SEED_BASE + 50_000 + i;
    const id = studentIdFor(seed);
    const plan = await planTemplate(BARCODE_CARD, { students: [{ student_id: id }] }).catch(() => null);
    if (!plan) {
      refused++;
      continue;
    }
    const r = await recognizePage(
      await renderScan(plan.cards[0]!.sides[0]!.ops, [], effectsFor('hard', dpi, seed)),
      createLayoutSet([plan.layout]),
    );
    if (r.status === 'ok' && r.student_id === id) read++;
    else if (r.status === 'ok' && r.student_id) wrong++;
    else unread++;
  }
  console.log(
    `${dpi} dpi, module ${module} mm: ${read} read, ${wrong} wrong, ${unread} not read (1001), ${refused} ids too long for this width`,
  );
}
