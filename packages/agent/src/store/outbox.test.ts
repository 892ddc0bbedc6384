// The box's outbox on a real directory: durable before append returns, one event in flight per
// task, re-sent after reconnects, forgotten only when acknowledged, and sound under
// acknowledgements that arrive while earlier ones are still being written off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobEvent } from '@boxhub/protocol';
import { Outbox } from './outbox.ts';

const finished = { error_code: 0, items: 0, pages: 0 };

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-outbox-'));
  const sent: JobEvent[] = [];
  const box = new Outbox({
    dir,
    publish: async (e) => {
      sent.push(e);
    },
  });
  return {
    dir,
    sent,
    box,
    cleanUp: () => {
      box.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('events are on disk before append returns, sent one per task at a time, in seq order', async () => {
  const { dir, sent, box, cleanUp } = setup();
  try {
    await box.load();
    box.setConnected(true);
    const a1 = await box.append('task-a', 'scan.finished', finished);
    const a2 = await box.append('task-a', 'scan.finished', finished);
    const b1 = await box.append('task-b', 'scan.finished', finished);
    assert.deepEqual([a1.seq, a2.seq, b1.seq], [1, 2, 1]);
    assert.equal(readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'seqs.json').length, 3);
    assert.deepEqual(
      sent.map((e) => e.id),
      [a1.id, b1.id],
      'the second event of task-a waits for the first',
    );
    await box.ack([a1.id]);
    assert.deepEqual(
      sent.map((e) => e.id),
      [a1.id, b1.id, a2.id],
    );
    assert.equal(box.pendingFor('task-a'), 1);
  } finally {
    cleanUp();
  }
});

test('acknowledgements racing each other lose nothing and remove exactly what they name', async () => {
  const { box, cleanUp } = setup();
  try {
    await box.load();
    const events = [];
    for (let i = 0; i < 20; i++) events.push(await box.append(`task-${i}`, 'scan.finished', finished));
    // The first acknowledgement names the newest event and is paused writing it off while the
    // second removes ten older ones: the queue shrinks under the first.
    await Promise.all([box.ack([events[19]!.id]), box.ack(events.slice(0, 10).map((e) => e.id))]);
    assert.equal(box.size, 9);
    await Promise.all(events.slice(10, 19).map((e) => box.ack([e.id])));
    assert.equal(box.size, 0);
  } finally {
    cleanUp();
  }
});

test('what an earlier run left is loaded and sent again; seq goes on where it was', async () => {
  const { dir, box, cleanUp } = setup();
  try {
    await box.load();
    const e = await box.append('task-a', 'scan.finished', finished);
    box.close();
    const again: JobEvent[] = [];
    const next = new Outbox({
      dir,
      publish: async (x) => {
        again.push(x);
      },
    });
    await next.load();
    next.setConnected(true);
    assert.deepEqual(
      again.map((x) => x.id),
      [e.id],
      'the unacknowledged event is sent after the restart',
    );
    await next.ack([e.id]);
    const e2 = await next.append('task-a', 'scan.finished', finished);
    assert.equal(e2.seq, 2, "a task's seq never repeats");
    next.close();
  } finally {
    cleanUp();
  }
});

test('seqs.json that cannot be written (a full disk) neither holds an event back nor lets a restart reuse a seq', async () => {
  const { dir, sent, box, cleanUp } = setup();
  try {
    await box.load();
    box.setConnected(true);
    // seqs.json as a directory: every write of it fails, as on a full disk, while event files
    // (new names) are still written.
    mkdirSync(join(dir, 'seqs.json'));
    const e1 = await box.append('task-a', 'scan.finished', finished);
    assert.deepEqual(
      sent.map((e) => e.id),
      [e1.id],
      'the event on disk is sent although seqs.json was not written',
    );
    await box.ack([e1.id]);
    const files = () => readdirSync(dir).filter((f) => f !== 'seqs.json');
    assert.equal(files().length, 1, 'its file stays while seqs.json is behind');
    // A restart now takes the seq from that file: the next event is 2, not 1 again.
    const again = new Outbox({ dir, publish: async () => undefined });
    await again.load();
    assert.equal((await again.append('task-a', 'scan.finished', finished)).seq, 2);
    again.close();
    // Once seqs.json can be written, acknowledged files go.
    rmSync(join(dir, 'seqs.json'), { recursive: true });
    const e2 = await box.append('task-b', 'scan.finished', finished);
    await box.ack([e2.id]);
    assert.deepEqual(
      files().filter((f) => f.endsWith(`${e1.id}.json`) || f.endsWith(`${e2.id}.json`)),
      [],
    );
  } finally {
    cleanUp();
  }
});
