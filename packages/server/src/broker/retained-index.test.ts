// The embedded broker's retained messages answered by topic for a literal filter, by aedes's
// own scan for a wildcard one: the same messages either way.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { Aedes } from 'aedes';
import { indexedMemoryPersistence } from './retained-index.ts';

const publish = (topic: string, payload: string) => ({
  cmd: 'publish' as const,
  topic,
  payload: Buffer.from(payload),
  qos: 1 as const,
  retain: true,
  dup: false,
});

async function topicsOf(stream: Readable): Promise<string[]> {
  const out: string[] = [];
  for await (const p of stream)
    out.push(`${(p as { topic: string }).topic}=${(p as { payload: Buffer }).payload.toString()}`);
  return out.sort();
}

test('literal filters are answered from the index, wildcards by aedes; an empty message deletes', async () => {
  const p = indexedMemoryPersistence();
  const broker = await Aedes.createBroker({ persistence: p }); // sets the persistence up
  after(() => new Promise<void>((r) => broker.close(() => r())));
  // Stored the way aedes stores them: a retained PUBLISH through the broker.
  const store = (packet: ReturnType<typeof publish>) =>
    new Promise<void>((resolve, reject) => broker.publish(packet, (e) => (e ? reject(e) : resolve())));
  await store(publish('box/a/state', 's1'));
  await store(publish('box/a/presence', 'on'));
  await store(publish('box/b/state', 's2'));
  await store(publish('box/a/state', 's3')); // replaces s1
  assert.deepEqual(await topicsOf(p.createRetainedStreamCombi(['box/a/state', 'box/c/state'])), ['box/a/state=s3']);
  assert.deepEqual(await topicsOf(p.createRetainedStreamCombi(['box/a/cmd'])), []);
  assert.deepEqual(await topicsOf(p.createRetainedStreamCombi(['box/+/state'])), ['box/a/state=s3', 'box/b/state=s2']);
  await store(publish('box/a/state', ''));
  assert.deepEqual(await topicsOf(p.createRetainedStreamCombi(['box/a/state'])), []);
  assert.deepEqual(await topicsOf(p.createRetainedStreamCombi(['box/#'])), ['box/a/presence=on', 'box/b/state=s2']);
});
