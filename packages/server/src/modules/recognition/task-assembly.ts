// One recognition task's assembly, kept by a node between runs of its assemble job (worker.ts):
// a cache of what any node can rebuild from the stored rows.
import {
  StudentAssembler,
  type LayoutSet,
  type PageReading,
  type PageSource,
  type StudentResult,
} from '@boxhub/recognizer';
import type { RecognitionRepository } from './repository.ts';

/**
 * One task's assembly so far: the StudentAssembler fed with the task's read pages in scan order
 * up to the first page not read yet, and every result it has given. Pages are only appended
 * (`seq`) and a stored reading never changes, so a run feeds only the pages read since the last
 * run; replaying the whole stack every run made an N-page stack cost O(N²) reads and pushes.
 */
export class TaskAssembly {
  readonly setKey: string;
  readonly asm: StudentAssembler;
  readonly results: StudentResult[] = [];
  /** The page row of each source fed (the callbacks' page download links). */
  readonly rowOf = new Map<PageSource, { blob_key: string }>();
  busy = false;
  /** `seq` of the last page fed; -1 before the first. */
  private lastSeq = -1;

  constructor(setKey: string, set: LayoutSet) {
    this.setKey = setKey;
    this.asm = new StudentAssembler(set);
  }

  /** Feeds the pages read since the last call; true when every page received so far is read. */
  async feed(repo: RecognitionRepository, uuid: string): Promise<boolean> {
    const heads = await repo.pageHeads(repo.db, uuid, this.lastSeq);
    const ready: typeof heads = [];
    for (const p of heads) {
      if (!p.read) break;
      ready.push(p);
    }
    const texts =
      ready.length > 0
        ? await repo.readings(
            repo.db,
            uuid,
            ready.map((p) => Number(p.seq)),
          )
        : new Map<number, string>();
    for (const p of ready) {
      const text = texts.get(Number(p.seq));
      if (text === undefined) return false;
      const source: PageSource = {
        paper_number: Number(p.paper_number),
        page_number: Number(p.page_number),
        front: Number(p.front) === 1,
        item_id: Number(p.item_id),
      };
      this.rowOf.set(source, p);
      this.results.push(...this.asm.push(source, JSON.parse(text) as PageReading));
      this.lastSeq = Number(p.seq);
    }
    return ready.length === heads.length;
  }
}
