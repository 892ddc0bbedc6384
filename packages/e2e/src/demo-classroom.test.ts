// The README's feedback-card walk-through on the demo, with the real commands as child
// processes: `boxhub serve --demo`, a card template printed on the demo box (2 copies), the
// demo's class filling in the printed cards (cli/src/demo-classroom.ts), and `boxhub card run`
// reading them back: the results are what the class marked.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { BOXHUB_BIN, startBoxhub } from '@boxhub/cli/testing/boxhub.ts';
import { Boxhub } from '@boxhub/sdk';
import { testSchemaName } from '@boxhub/server/testing/harness.ts';
import { exampleCard } from './card-stack.ts';

const bin = BOXHUB_BIN;

interface Truth {
  template_id: string;
  students: Array<{ student_id: string | null; fills: number[][] }>;
}

test('demo: printed card templates (copies; a personalised set) are filled in by the class and read back by `boxhub card run`', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boxhub-demo-class-'));
  // As `npm start` (the embedded broker; the external pass puts the database on PostgreSQL, in
  // a schema of its own). BOXHUB_ALLOW_PRIVATE_NETWORKS unset: the demo allows the loopback
  // receivers that `card run` and the template's own pdf_url need.
  const pg = process.env.BOXHUB_TEST_ENGINE === 'external' && process.env.BOXHUB_TEST_DATABASE_URL;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BOXHUB_DATA_DIR: dataDir,
    PORT: '0',
    BOXHUB_MQTT_PORT: '0',
    LOG_LEVEL: 'silent',
    MQTT_URL: '',
    DATABASE_URL: pg || '',
    BOXHUB_DATABASE_SCHEMA: pg ? testSchemaName() : '',
  };
  delete env.BOXHUB_ALLOW_PRIVATE_NETWORKS;
  const serve = startBoxhub(['serve', '--demo'], env);
  const seen = (re: RegExp) => serve.waitFor(re);
  try {
    await seen(/boxhub is running at/);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      base_url: string;
      api_key: string;
      device_code: string;
    };
    const sdk = new Boxhub({ baseUrl: demo.base_url, apiKey: demo.api_key });
    const { uuid } = await sdk.devices.getUuid({ code: demo.device_code });
    await sdk.devices.bind({ uuid: uuid!, name: 'Room 4' });
    // The quick start's print line, with the sample the demo writes: printed, and not taken for
    // cards (the feeder keeps its 20 sheets of text).
    const sample = join(dataDir, 'worksheet.pdf');
    const p = await promisify(execFile)(
      process.execPath,
      [bin, 'print', sample, '--device', demo.device_code, '--duplex', '--json'],
      {
        env: { ...process.env, BOXHUB_URL: demo.base_url, BOXHUB_API_KEY: demo.api_key },
        timeout: 120_000,
      },
    );
    const printedSample = JSON.parse(p.stdout) as { error_code: number; pages: number };
    assert.deepEqual([printedSample.error_code, printedSample.pages], [0, 3], p.stdout);

    const made = await sdk.recognition.createTemplate({ definition: { ...exampleCard } });

    // Printed as the README says: the template's own link, two copies, two-sided.
    const printed = await sdk.print.create({
      client_uuid: uuid!,
      file_type: 'pdf',
      file_url: made.pdf_url,
      options: { number: 2, duplex: 'SVC_DP_NOTUMBLE' },
    });
    const done = await sdk.print.waitForFinish(
      { client_uuid: uuid!, print_uuid: printed.uuid! },
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

    const r = await promisify(execFile)(
      process.execPath,
      [bin, 'card', 'run', '--device', demo.device_code, '--template', made.template_id, '--json'],
      {
        env: { ...process.env, BOXHUB_URL: demo.base_url, BOXHUB_API_KEY: demo.api_key },
        timeout: 120_000,
      },
    );
    const events = r.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            event: string;
            body?: { error_code: number; result?: { student_id: string; fills: number[][] } };
          },
      );
    const students = events.filter((e) => e.event === 'student');
    assert.equal(students.length, 2, r.stdout + r.stderr);
    for (const [i, s] of students.entries()) {
      assert.equal(s.body!.error_code, 0);
      assert.equal(s.body!.result!.student_id, truth.students[i]!.student_id);
      assert.deepEqual(s.body!.result!.fills, truth.students[i]!.fills);
    }
    assert.equal(events.at(-1)!.event, 'end');

    // A personalised set (one card per student of the class list), printed in reverse order as
    // the API's default asks: each student marks the number printed on their card, and the
    // stack is in class-list order, as the tray holds it.
    const ids = ['20240017', '20240018', '20240019'];
    const personal = await sdk.recognition.createTemplate({
      definition: { ...exampleCard },
      students: ids.map((student_id) => ({ student_id })),
    });
    const second = await sdk.print.create({
      client_uuid: uuid!,
      file_type: 'pdf',
      file_url: personal.pdf_url,
      options: { duplex: 'SVC_DP_NOTUMBLE' },
    });
    assert.equal(
      (
        await sdk.print.waitForFinish(
          { client_uuid: uuid!, print_uuid: second.uuid! },
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
    const r2 = await promisify(execFile)(
      process.execPath,
      [bin, 'card', 'run', '--device', demo.device_code, '--template', personal.template_id, '--json'],
      {
        env: { ...process.env, BOXHUB_URL: demo.base_url, BOXHUB_API_KEY: demo.api_key },
        timeout: 120_000,
      },
    );
    const read = r2.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            event: string;
            body?: { error_code: number; result?: { student_id: string; fills: number[][] } };
          },
      )
      .filter((e) => e.event === 'student');
    assert.deepEqual(
      read.map((e) => [e.body!.error_code, e.body!.result!.student_id]),
      ids.map((id) => [0, id]),
      r2.stdout + r2.stderr,
    );
    assert.deepEqual(
      read.map((e) => e.body!.result!.fills),
      truth2.students.map((s) => s.fills),
    );
  } finally {
    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0, serve.out.all);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
