// Ids of history entries (a task's, a box's): sorted as text they give the timeline, by time and
// then by the order this node wrote them: `at` (15 digits), a counter, and this process's own
// random tag, so two nodes writing in the same millisecond never make the same id. The tag is
// drawn once: drawn for each id (4 random bytes) it cost a node ~13 µs an entry, a quarter of a
// second of its thread when 10,000 boxes came back at once (bench/README.md, "reconnect-storm").
import { randomBytes } from 'node:crypto';

const TAG = randomBytes(4).toString('hex');
let seq = 0;

export function timeOrderedId(at: number): string {
  seq = (seq + 1) % 1_000_000;
  return `${String(Math.max(0, Math.floor(at))).padStart(15, '0')}-${String(seq).padStart(6, '0')}-${TAG}`;
}
