import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseCardDefinition, validateCardDefinition, CardDefinitionError } from './card-definition.ts';

const example = JSON.parse(readFileSync(new URL('../../../docs/examples/card.json', import.meta.url), 'utf8'));

test('the documented example is a valid definition', () => {
  assert.deepEqual(validateCardDefinition(example), []);
  assert.equal(parseCardDefinition(example).chapters.length, 7);
});

test('every problem is reported at once, with its path', () => {
  const problems = validateCardDefinition({
    id: 'bad id!',
    qrcode: '',
    student_number: { type: 'bubbles', digits: 0 },
    chapters: [{ areas: 0 }, { areas: 3, columns: 99, colour: 'red' }],
    extra: 1,
  });
  assert.deepEqual(
    problems.map((p) => p.split(':')[0]).sort(),
    [
      'chapters[0].areas',
      'chapters[1].colour',
      'chapters[1].columns',
      'extra',
      'id',
      'qrcode',
      'student_number.digits',
    ].sort(),
  );
  assert.throws(() => parseCardDefinition({}), CardDefinitionError);
  assert.deepEqual(validateCardDefinition([]), ['definition: must be a JSON object']);
});
