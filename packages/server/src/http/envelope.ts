import { errorCatalog } from '@boxhub/protocol';
import type { FastifyReply } from 'fastify';

export interface EnvelopeBody<T> {
  code: number;
  msg: string;
  data: T | null;
}

export function ok<T>(data: T): EnvelopeBody<T> {
  return { code: 0, msg: errorCatalog.OK.msg, data };
}
export const okNull: EnvelopeBody<null> = Object.freeze({ code: 0, msg: errorCatalog.OK.msg, data: null });

/**
 * Answers `ok(data)` where `data` is made of `key`, a shared and immutable object (a frozen view,
 * e.g. a cached device's Client): the JSON the route's own response serializer made the first
 * time is sent again, as is. Serialising the same `info` answer was a twentieth of its cost
 * (bench/api-throughput). Keyed by the object, so a new view is serialised anew.
 */
const serialized = new WeakMap<object, string>();
export function sendOkOf(reply: FastifyReply, key: object, data: unknown): FastifyReply {
  const shared = Object.isFrozen(key);
  let json = shared ? serialized.get(key) : undefined;
  if (json === undefined) {
    json = String(reply.serialize(ok(data)));
    if (shared) serialized.set(key, json);
  }
  return reply.type('application/json; charset=utf-8').send(json);
}
