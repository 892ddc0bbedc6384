// The review pages over plain HTTP, as a browser without script (docs/console.md, "Review"):
// the run page lists the students that need review (hostile text stays text); the correction
// form needs the CSRF token and a same-origin request, asks first (the confirmation page carries
// the fields, escaped) and records nothing until confirmed; another application's run is 404,
// confirmed or not. The browser test (packages/e2e/src/console-review.test.ts) does the rest
// with real pages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleClient } from '../../testing/console-client.ts';
import { startTestServer, type ApiClient, type TestServer } from '../../testing/harness.ts';
import { startReceiver, type Receiver } from '../../testing/receiver.ts';

let t: TestServer;
let rx: Receiver;
type App = { id: string; api_key: string; api: ApiClient };
let a: App;
let b: App;

before(async () => {
  t = await startTestServer({ env: { BOXHUB_ALLOW_PRIVATE_NETWORKS: '1' } });
  rx = await startReceiver();
  a = await t.createApp('school-a', { ess: true });
  b = await t.createApp('school-b', { ess: true });
});
after(async () => {
  await t.close();
  await rx.close();
});

/** A run whose student 1 failed its student number (its result callback queued as the assembler queues it). */
async function run(app: App, detail: string): Promise<string> {
  const r = await app.api.post<{ uuid: string }>('/api/application/ess/create', { callback_url: `${rx.url}/r` });
  assert.equal(r.code, 0, r.msg);
  const uuid = r.data.uuid;
  await t.server.services.callbacks.enqueue(t.server.repos.tasks.db, {
    appId: app.id,
    url: `${rx.url}/r`,
    method: 'POST',
    event: 'recognition.result',
    taskUuid: uuid,
    body: { uuid, finish: true, error_code: 1001, pages: [], result: null, detail },
    group: `recognition:${uuid}:0`,
  });
  return uuid;
}
const corrections = async (uuid: string) =>
  (await t.server.db.kysely.selectFrom('recognition_corrections').selectAll().where('task_uuid', '=', uuid).execute())
    .length;

describe('review pages', () => {
  test("the run lists the student that needs review; its page and the correction form keep to the console's rules", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const uuid = await run(a, 'student number: <script>alert(1)</script>');
    const page = await c.get(`/console/recognition/${uuid}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /<tr class="review-item" data-student="1">/);
    assert.match(page.body, new RegExp(`href="/console/recognition/${uuid}/students/1"`));
    assert.ok(
      !page.body.includes('<script>alert(1)') && page.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'),
      'the detail is escaped',
    );
    const student = await c.get(`/console/recognition/${uuid}/students/1`);
    assert.equal(student.status, 200);
    assert.match(student.body, /error 1001/);
    assert.ok(!student.body.includes('<script>alert(1)'));

    const action = `/console/recognition/${uuid}/students/1/correct`;
    const fields = { revision: '0', shown: '', student_id: '<b>"x"</b>', reviewer: 'Ms. <i>E</i>' };
    assert.equal((await c.post(action, { ...fields, _confirmed: '1' }, { csrf: null })).status, 403, 'no CSRF token');
    assert.equal(
      (await c.post(action, { ...fields, _confirmed: '1' }, { headers: { origin: 'http://evil.example' } })).status,
      403,
      'another origin',
    );
    // Without script: the confirmation page, with the fields carried (escaped), nothing done.
    const ask = await c.post(action, fields);
    assert.equal(ask.status, 200);
    assert.match(
      ask.body,
      /id="confirm-ask">Send the corrected result of student 1 to the task&#39;s callback URL as revision 1\?/,
    );
    assert.match(ask.body, /name="student_id" value="&lt;b&gt;&quot;x&quot;&lt;\/b&gt;"/);
    assert.match(ask.body, /name="_confirmed" value="1"/);
    assert.ok(!ask.body.includes('<b>"x"</b>') && !ask.body.includes('<i>E</i>'));
    assert.equal(await corrections(uuid), 0);
    // Confirmed: the service's refusal on the page (this student has no page left to correct), escaped.
    const refused = await c.post(action, { ...fields, _confirmed: '1' });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /id="review-error">student 1: every page is marked as not a card.*\(code 30421\)/);
    assert.equal(await corrections(uuid), 0);
  });

  test("another application's run: the student page, its images and the correction are 404, confirmed or not", async () => {
    const c = await new ConsoleClient(t.url).signIn(a.api_key);
    const theirs = await run(b, 'b-secret-detail');
    for (const p of [
      `/console/recognition/${theirs}/students/1`,
      `/console/recognition/${theirs}/pages/1/image`,
      `/console/recognition/${theirs}/pages/1/annotated`,
    ]) {
      const r = await c.get(p);
      assert.equal(r.status, 404, p);
      assert.ok(!r.body.includes('b-secret-detail'));
    }
    for (const confirm of [{}, { _confirmed: '1' }] as Array<Record<string, string>>) {
      assert.equal(
        (
          await c.post(`/console/recognition/${theirs}/students/1/correct`, {
            revision: '0',
            student_id: '1',
            ...confirm,
          })
        ).status,
        404,
      );
    }
    assert.equal(await corrections(theirs), 0);
  });
});
