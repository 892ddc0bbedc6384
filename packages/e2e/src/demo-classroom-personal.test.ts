// The README's personalised card set on the demo (one card per student of a class list), with
// the real commands as child processes: printed in reverse order as the API's default asks, the
// demo's class marking the numbers printed on their cards, and `boxhub card run` reading the
// stack back in class-list order. Copies of a card: demo-classroom.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { exampleCard } from './card-stack.ts';
import { startDemo, type Truth } from './demo-rig.ts';

test('demo: a personalised set of card templates is filled in by the class and read back by `boxhub card run`', async () => {
  const { seen, sdk, uuid, cardRun, close } = await startDemo();
  try {
    // A personalised set (one card per student of the class list), printed in reverse order as
    // the API's default asks: each student marks the number printed on their card, and the
    // stack is in class-list order, as the tray holds it.
    const ids = ['20240017', '20240018', '20240019'];
    const personal = await sdk.recognition.createTemplate({
      definition: { ...exampleCard },
      students: ids.map((student_id) => ({ student_id })),
    });
    const second = await sdk.print.create({
      client_uuid: uuid,
      file_type: 'pdf',
      file_url: personal.pdf_url,
      options: { duplex: 'SVC_DP_NOTUMBLE' },
    });
    assert.equal(
      (
        await sdk.print.waitForFinish(
          { client_uuid: uuid, print_uuid: second.uuid! },
          { intervalMs: 100, timeoutMs: 60_000 },
        )
      ).error_code,
      0,
    );
    const line2 = await seen(
      /classroom: 3 student\(s\) filled in card [0-9a-f]{8}; the 3 sheet\(s\) are in the demo box's feeder \(what they marked: (.+)\)\n/,
    );
    const truth2 = JSON.parse(readFileSync(line2[1]!, 'utf8')) as Truth;
    assert.deepEqual(
      truth2.students.map((s) => s.student_id),
      ids,
    );
    const { events: all, out: out2 } = await cardRun(personal.template_id);
    const read = all.filter((e) => e.event === 'student');
    assert.deepEqual(
      read.map((e) => [e.body!.error_code, e.body!.result!.student_id]),
      ids.map((id) => [0, id]),
      out2,
    );
    assert.deepEqual(
      read.map((e) => e.body!.result!.fills),
      truth2.students.map((s) => s.fills),
    );
  } finally {
    await close();
  }
});
