// Requests from the box to the server over the box link (box/{uuid}/req), answered by a `reply`
// command: short-lived signed URLs to upload a scan item or download a print file. Not
// durable: a request that gets no answer in time fails, and its caller asks again.
import { randomUUID } from 'node:crypto';
import type { BoxRequestType, ReplyParams } from '@boxhub/protocol';
import { topics } from '@boxhub/protocol';
import type { BoxLink } from './connection.ts';

/** The server answered, and said no. */
export class RequestRefusedError extends Error {}

export class BoxRequests {
  private readonly link: Pick<BoxLink, 'publish'>;
  private readonly uuid: string;
  private readonly pending = new Map<string, { resolve: (r: ReplyParams) => void; timer: NodeJS.Timeout }>();

  constructor(link: Pick<BoxLink, 'publish'>, uuid: string) {
    this.link = link;
    this.uuid = uuid;
  }

  async ask(
    type: BoxRequestType,
    params: Record<string, unknown>,
    timeoutMs = 10_000,
  ): Promise<Record<string, unknown>> {
    const id = randomUUID();
    const answered = new Promise<ReplyParams>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply to ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
    });
    try {
      await this.link.publish(topics.req(this.uuid), JSON.stringify({ v: 1, id, type, params }), { qos: 1 });
    } catch (e) {
      const p = this.pending.get(id);
      if (p) {
        clearTimeout(p.timer);
        this.pending.delete(id);
      }
      throw e;
    }
    const r = await answered;
    // A failure for now is no refusal: the caller asks again, as after no reply at all.
    if (!r.ok && r.retry)
      throw new Error(`${type} failed on the server (${r.error ?? 'no reason given'}); asking again`);
    if (!r.ok) throw new RequestRefusedError(r.error ?? `${type} refused`);
    return r.data ?? {};
  }

  /** A reply command arrived. */
  resolve(r: ReplyParams): void {
    const p = this.pending.get(r.request);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(r.request);
    p.resolve(r);
  }

  close(): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
    }
  }
}
