// Generator B's cards: three definitions of other shapes than generator A's (narrow and wide
// rows, three single-sided sheets, ten-digit numbers, a personalised barcode card). Evaluation
// only: nothing in the recognizer was set on these pages.
import type { CardDefinition } from '../../../packages/recognizer/src/index.ts';
import type { Scenario } from '../rendered.ts';

/** Apart from generator A's tuning (1 000 000...) and evaluation (9 000 000...) seeds and AMC's (5 000 000...). */
export const INDEPENDENT_SEED_BASE = 7_000_000;

export const INDEPENDENT_CARDS: readonly CardDefinition[] = [
  {
    id: 'indep-quiz',
    title: 'Weekly quiz, week 14',
    qrcode: 'https://quiz.example.org/w/14?k=Zx81',
    student_number: { type: 'bubbles', digits: 6 },
    chapters: [
      { title: 'Vocabulary', areas: 24, columns: 4 },
      { title: 'Grammar', areas: 40, columns: 5 },
      { title: 'Listening', areas: 36, columns: 6 },
      { title: 'Reading', areas: 60, columns: 12, new_side: true },
      { title: 'Writing self-check', areas: 30, columns: 3 },
    ],
  },
  {
    id: 'indep-lab',
    title: 'Lab report checklist',
    qrcode: 'LAB/2025/CHEM/07',
    student_number: { type: 'barcode' },
    chapters: [
      { title: 'Preparation', areas: 20, columns: 10 },
      { title: 'Observations', areas: 64, columns: 8 },
      { title: 'Conclusions', areas: 48, columns: 12, new_side: true },
    ],
  },
  {
    id: 'indep-survey',
    title: 'End of term survey',
    qrcode: 'survey:t3:2025:form-b',
    student_number: { type: 'bubbles', digits: 10 },
    duplex: true,
    chapters: [
      { title: 'Lessons', areas: 150 },
      { title: 'Homework', areas: 12, columns: 6 },
      { title: 'Tests', areas: 90, columns: 9, new_side: true },
      { title: 'Overall', areas: 100, columns: 10 },
    ],
  },
];

/** Which definition a job uses: mixed pages alternate the quiz and the survey; barcode is the lab card. */
export function independentCardFor(scenario: Scenario, id: number): number {
  return scenario === 'barcode' ? 1 : id % 2 === 0 ? 0 : 2;
}
