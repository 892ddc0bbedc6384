// The README's feedback-card walk-through on the demo, with the real commands as child
// processes: `boxhub serve --demo`, a card template printed on the demo box (2 copies), the
// demo's class filling in the printed cards (cli/src/demo-classroom.ts), and `boxhub card run`
// reading them back: the results are what the class marked. A personalised set:
// demo-classroom-personal.test.ts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { exampleCard } from './card-stack.ts';
import { bin, startDemo, type Truth } from './demo-rig.ts';

test('demo: printed card templates (copies) are filled in by the class and read back by `boxhub card run`', async () => {
  const { dataDir, serve, seen, demo, sdk, uuid, cliEnv, cardRun, close } = await startDemo();
  try {
    // The quick start's print line, with the sample the demo writes: printed, and not taken for
    // cards (the feeder keeps its 20 sheets of text).
    const sample = `${dataDir}/worksheet.pdf`;
    const p = await promisify(execFile)(
      process.execPath,
      [bin, 'print', sample, '--device', demo.device_code, '--duplex', '--json'],
      {
        env: cliEnv,
        timeout: 120_000,
      },
    );
    const printedSample = JSON.parse(p.stdout) as { error_code: number; pages: number };
    assert.deepEqual([printedSample.error_code, printedSample.pages], [0, 3], p.stdout);

    const made = await sdk.recognition.createTemplate({ definition: { ...exampleCard } });

    // Printed as the README says: the template's own link, two copies, two-sided.
    const printed = await sdk.print.create({
      client_uuid: uuid,
      file_type: 'pdf',
      file_url: made.pdf_url,
      options: { number: 2, duplex: 'SVC_DP_NOTUMBLE' },
    });
    const done = await sdk.print.waitForFinish(
      { client_uuid: uuid, print_uuid: printed.uuid! },
      { intervalMs: 100, timeoutMs: 60_000 },
    );
    assert.equal(done.error_code, 0);
    assert.doesNotMatch(serve.out.all, /classroom: .*not filled in/, 'the worksheet was no card and nothing failed');
    const line = await seen(
      /classroom: (\d+) student\(s\) filled in card ([0-9a-f]{8}); the (\d+) sheet\(s\) are in the demo box's feeder \(what they marked: (.+)\)\n/,
    );
    assert.deepEqual(
      [line[1], line[2], line[3]],
      ['2', made.template_id, '2'],
      'two copies of a one-sheet card: two students, two sheets',
    );
    const truth = JSON.parse(readFileSync(line[4]!, 'utf8')) as Truth;
    assert.equal(truth.template_id, made.template_id);
    assert.equal(truth.students.length, 2);
    assert.notDeepEqual(truth.students[0]!.fills, truth.students[1]!.fills, 'each student marks their own card');

    const { events, out } = await cardRun(made.template_id);
    const students = events.filter((e) => e.event === 'student');
    assert.equal(students.length, 2, out);
    for (const [i, s] of students.entries()) {
      assert.equal(s.body!.error_code, 0);
      assert.equal(s.body!.result!.student_id, truth.students[i]!.student_id);
      assert.deepEqual(s.body!.result!.fills, truth.students[i]!.fills);
    }
    assert.equal(events.at(-1)!.event, 'end');
  } finally {
    await close();
  }
});
