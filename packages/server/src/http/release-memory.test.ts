// Memory back after large request bodies (release-memory.ts): once a large body has been
// answered and the node is quiet, a full collection runs (observed as a forced major GC that
// starts after the answer: V8's own collections are never flagged forced), so the garbage of a
// burst is not held until the next allocation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { eventually, startTestServer } from '../testing/harness.ts';

test('a full collection runs about a second after a large body is answered, and not after small ones', async () => {
  const t = await startTestServer();
  const majors: number[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const d = (e as unknown as { detail?: { kind?: number; flags?: number } }).detail;
      if (
        d?.kind === constants.NODE_PERFORMANCE_GC_MAJOR &&
        ((d.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0
      )
        majors.push(e.startTime);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  try {
    const { api_key } = await t.createApp();
    const post = (bytes: number) =>
      fetch(`${t.url}/api/print/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_uuid: 'x'.repeat(8), file_type: 'pdf', file_content: 'A'.repeat(bytes) }),
      }).then((r) => r.json() as Promise<{ code: number }>);
    // Small bodies: nothing scheduled.
    for (let i = 0; i < 5; i++) assert.notEqual((await post(1000)).code, 0);
    let answered = performance.now();
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(
      majors.filter((m) => m > answered),
      [],
      'no forced collection after small bodies',
    );
    // A 10 MB body (refused, as the large bodies of a burst may be): one collection follows.
    assert.notEqual((await post(10 * 1024 * 1024)).code, 0);
    answered = performance.now();
    await eventually(
      () => majors.some((m) => m > answered),
      'a forced major GC after the large body was answered',
      10_000,
    );
    const first = majors.find((m) => m > answered)!;
    // One second after the server answered (the client read the answer a little later).
    assert.ok(
      first - answered >= 500,
      `not before the node has been quiet for a while (${Math.round(first - answered)} ms)`,
    );
  } finally {
    obs.disconnect();
    await t.close();
  }
});
