// The JSON card definition an application writes (docs/cards.md). Validation collects every
// problem at once so a school's IT person can fix a definition in one round.

import type { CardDefinition } from '@boxhub/protocol/card-definition.ts';

// The type lives with the API's shapes (the SDK types template creation with it).
export type { CardDefinition, ChapterSpec, StudentNumberSpec } from '@boxhub/protocol/card-definition.ts';

export const LIMITS = {
  idPattern: /^[A-Za-z0-9._-]{1,64}$/,
  titleMax: 80,
  qrcodeMax: 120,
  digitsMin: 1,
  digitsMax: 12,
  chaptersMax: 60,
  areasMax: 150,
  columnsMax: 15,
} as const;

export class CardDefinitionError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid card definition: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isInt(x: unknown, min: number, max: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
}

/** Every problem found in `input`, as `path: message`; empty when it is a valid definition. */
export function validateCardDefinition(input: unknown): string[] {
  const p: string[] = [];
  if (!isObject(input)) return ['definition: must be a JSON object'];
  const known = new Set(['$schema', 'id', 'title', 'qrcode', 'student_number', 'duplex', 'chapters']);
  for (const k of Object.keys(input)) if (!known.has(k)) p.push(`${k}: unknown field`);
  if (typeof input.id !== 'string' || !LIMITS.idPattern.test(input.id))
    p.push('id: 1-64 characters of A-Z a-z 0-9 . _ -');
  if (input.title !== undefined && (typeof input.title !== 'string' || input.title.length > LIMITS.titleMax))
    p.push(`title: string of at most ${LIMITS.titleMax} characters`);
  // QR modules must stay >= 0.9 mm to survive 100-dpi scans, which bounds the content length.
  if (typeof input.qrcode !== 'string' || input.qrcode.length < 1 || input.qrcode.length > LIMITS.qrcodeMax)
    p.push(`qrcode: string of 1-${LIMITS.qrcodeMax} characters`);
  const sn = input.student_number;
  if (!isObject(sn)) p.push('student_number: object with type "bubbles" or "barcode"');
  else if (sn.type === 'bubbles') {
    if (!isInt(sn.digits, LIMITS.digitsMin, LIMITS.digitsMax))
      p.push(`student_number.digits: integer ${LIMITS.digitsMin}-${LIMITS.digitsMax}`);
    for (const k of Object.keys(sn)) if (k !== 'type' && k !== 'digits') p.push(`student_number.${k}: unknown field`);
  } else if (sn.type === 'barcode') {
    for (const k of Object.keys(sn)) if (k !== 'type') p.push(`student_number.${k}: unknown field`);
  } else p.push('student_number.type: "bubbles" or "barcode"');
  if (input.duplex !== undefined && typeof input.duplex !== 'boolean') p.push('duplex: boolean');
  if (!Array.isArray(input.chapters) || input.chapters.length < 1 || input.chapters.length > LIMITS.chaptersMax) {
    p.push(`chapters: array of 1-${LIMITS.chaptersMax} chapters`);
  } else {
    input.chapters.forEach((c: unknown, i) => {
      const at = `chapters[${i}]`;
      if (!isObject(c)) {
        p.push(`${at}: object`);
        return;
      }
      for (const k of Object.keys(c))
        if (!['title', 'areas', 'columns', 'new_side'].includes(k)) p.push(`${at}.${k}: unknown field`);
      if (!isInt(c.areas, 1, LIMITS.areasMax)) p.push(`${at}.areas: integer 1-${LIMITS.areasMax}`);
      if (c.columns !== undefined && !isInt(c.columns, 1, LIMITS.columnsMax))
        p.push(`${at}.columns: integer 1-${LIMITS.columnsMax}`);
      if (c.title !== undefined && (typeof c.title !== 'string' || c.title.length > LIMITS.titleMax))
        p.push(`${at}.title: string of at most ${LIMITS.titleMax} characters`);
      if (c.new_side !== undefined && typeof c.new_side !== 'boolean') p.push(`${at}.new_side: boolean`);
    });
  }
  return p;
}

/** The definition, typed, or a CardDefinitionError listing every problem. */
export function parseCardDefinition(input: unknown): CardDefinition {
  const problems = validateCardDefinition(input);
  if (problems.length > 0) throw new CardDefinitionError(problems);
  return input as CardDefinition;
}
