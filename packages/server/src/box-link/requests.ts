// Answers what boxes ask the server (docs/box-protocol.md, "Requests"): short-lived signed URLs
// to upload a scan item or download a print file. A box that gets no reply asks again, so a
// handler must be idempotent (issuing a second URL for the same thing is).
import { BoxRequestParams, parseJson, type BoxRequest, type BoxRequestType } from '@boxhub/protocol';
import type { Static } from 'typebox';
import type { Logger } from 'pino';
import type { BoxGateway } from './gateway.ts';

/** A request the server refuses for a reason the box should hear (not a server fault). */
export class RequestRefused extends Error {}

export type RequestHandler<T extends BoxRequestType> = (
  device: string,
  params: Static<(typeof BoxRequestParams)[T]>,
) => Promise<Record<string, unknown>>;

export class BoxRequestRouter {
  private readonly handlers = new Map<BoxRequestType, RequestHandler<BoxRequestType>>();
  private readonly gateway: Pick<BoxGateway, 'onRequest' | 'send'>;
  private readonly log: Logger;

  constructor(gateway: Pick<BoxGateway, 'onRequest' | 'send'>, log: Logger) {
    this.gateway = gateway;
    this.log = log;
    gateway.onRequest((uuid, r) => this.handle(uuid, r));
  }

  on<T extends BoxRequestType>(type: T, handler: RequestHandler<T>): void {
    this.handlers.set(type, handler as unknown as RequestHandler<BoxRequestType>);
  }

  async handle(device: string, r: BoxRequest): Promise<void> {
    let reply: Record<string, unknown>;
    const params = parseJson(BoxRequestParams[r.type], JSON.stringify(r.params));
    const handler = this.handlers.get(r.type);
    if (!params.ok) reply = { request: r.id, ok: false, error: `params ${params.error}` };
    // Every request type has its handler once the node has built its task kinds (kinds.ts;
    // kinds.test.ts): none yet is a node still starting, asked again, not a refusal.
    else if (!handler)
      reply = { request: r.id, ok: false, error: `no handler for ${r.type} yet; ask again`, retry: true };
    else {
      try {
        reply = { request: r.id, ok: true, data: await handler(device, params.value as never) };
      } catch (e) {
        if (!(e instanceof RequestRefused)) this.log.error({ err: e, device, type: r.type }, 'box request failed');
        // Only a refusal is final; anything else (the database restarting, storage away) is
        // answered as a failure for now, which the box asks again about (docs/box-protocol.md).
        reply =
          e instanceof RequestRefused
            ? { request: r.id, ok: false, error: e.message }
            : { request: r.id, ok: false, error: 'server error; ask again', retry: true };
      }
    }
    await this.gateway
      .send(device, 'reply', reply)
      .catch((err: unknown) => this.log.warn({ err, device }, 'reply to a box request not sent'));
  }
}
