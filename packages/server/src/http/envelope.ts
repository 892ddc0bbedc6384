import { errorCatalog } from '@boxhub/protocol';

export interface EnvelopeBody<T> { code: number; msg: string; data: T | null }

export function ok<T>(data: T): EnvelopeBody<T> { return { code: 0, msg: errorCatalog.OK.msg, data }; }
export const okNull: EnvelopeBody<null> = Object.freeze({ code: 0, msg: errorCatalog.OK.msg, data: null });
