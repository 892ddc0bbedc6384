// Links to a page's annotated image (docs/cards.md, "The review loop"): the page as scanned
// with what was read drawn over it. Every result callback carries one per page, so rendering
// is lazy (when someone opens the link), never on the recognition path. The link is its own
// credential, like the blob store's: a token sealed with the server's secret key (AES-256-GCM,
// so it can be neither read nor altered) naming the application, the task, the page and the
// expiry. Every node opens it (they share the key).
import type { Clock } from '../../clock.ts';
import type { SecretBox } from '../../secret-box.ts';

export const ANNOTATED_PATH = '/recognition/annotated/';

export interface AnnotatedRef {
  appId: string;
  taskUuid: string;
  pageNumber: number;
}

export class AnnotatedLinks {
  private readonly box: SecretBox;
  private readonly publicUrl: () => string;
  private readonly clock: Clock;

  constructor(box: SecretBox, publicUrl: () => string, clock: Clock) {
    this.box = box;
    this.publicUrl = publicUrl;
    this.clock = clock;
  }

  url(ref: AnnotatedRef, ttlMs: number): string {
    const sealed = this.box.seal(
      JSON.stringify({ a: ref.appId, t: ref.taskUuid, p: ref.pageNumber, e: this.clock.now() + ttlMs }),
    );
    return `${this.publicUrl()}${ANNOTATED_PATH}${Buffer.from(sealed).toString('base64url')}.jpg`;
  }

  /** What a token names; 'expired' for a genuine token past its time; undefined for anything else. */
  open(token: string): AnnotatedRef | 'expired' | undefined {
    if (!/^[A-Za-z0-9_-]{20,1000}$/.test(token)) return undefined;
    let v: { a?: unknown; t?: unknown; p?: unknown; e?: unknown };
    try {
      v = JSON.parse(this.box.open(Buffer.from(token, 'base64url').toString('utf8'))) as typeof v;
    } catch {
      return undefined;
    }
    if (typeof v.a !== 'string' || typeof v.t !== 'string' || typeof v.p !== 'number' || typeof v.e !== 'number')
      return undefined;
    if (v.e < this.clock.now()) return 'expired';
    return { appId: v.a, taskUuid: v.t, pageNumber: v.p };
  }
}
