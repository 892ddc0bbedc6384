// Console sessions (docs/console.md "Security"). Signing in with an API key gives a cookie
// holding a sealed token (AES-256-GCM under the server's secret key, so every node reads it)
// that names the application, the key's id, an expiry and the session's CSRF token: never the
// key itself. Each request re-reads the key by id, so revoking or rotating the key ends its
// sessions at once on every node.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SecretBox } from '../../secret-box.ts';

export const SESSION_COOKIE = 'bh_console';
export const LOGIN_COOKIE = 'bh_console_login';
export const SESSION_TTL_MS = 12 * 3600_000;
/** The operator's session and sign-in cookies: their own names, sent to /console/operator only. */
export const OPERATOR_COOKIE = 'bh_console_op';
export const OPERATOR_LOGIN_COOKIE = 'bh_console_op_login';
export const OPERATOR_PATH = '/console/operator';

export interface SessionToken {
  app: string;
  key: string;
  exp: number;
  csrf: string;
}

export const newCsrf = (): string => randomBytes(24).toString('base64url');

export function sealSession(box: SecretBox, s: SessionToken): string {
  return box.seal(JSON.stringify({ v: 1, ...s })).replace(/^enc:v1:/, '');
}

/** The session a cookie holds, or undefined for anything forged, expired or sealed under another key. */
export function openSession(box: SecretBox, value: string | undefined, now: number): SessionToken | undefined {
  if (!value || value.length > 1000) return undefined;
  try {
    const s = JSON.parse(box.open(`enc:v1:${value}`)) as Partial<SessionToken> & { v?: number };
    if (
      s.v !== 1 ||
      (s as { kind?: unknown }).kind !== undefined ||
      typeof s.app !== 'string' ||
      typeof s.key !== 'string' ||
      typeof s.csrf !== 'string' ||
      typeof s.exp !== 'number'
    )
      return undefined;
    if (s.exp <= now) return undefined;
    return { app: s.app, key: s.key, exp: s.exp, csrf: s.csrf };
  } catch {
    return undefined;
  }
}

/**
 * An operator session (docs/console.md "Operators"): sealed like an application's, but of its own
 * kind (an application's token never opens as one, nor the other way round) and naming a digest
 * of the operator token it was made with, never the token: changing BOXHUB_OPERATOR_TOKEN ends
 * every operator session.
 */
export interface OperatorSessionToken {
  token: string;
  exp: number;
  csrf: string;
}

export const operatorTokenDigest = (operatorToken: string): string =>
  createHash('sha256').update('boxhub console operator\0').update(operatorToken).digest('base64url');

export function sealOperatorSession(box: SecretBox, s: OperatorSessionToken): string {
  return box.seal(JSON.stringify({ v: 1, kind: 'operator', ...s })).replace(/^enc:v1:/, '');
}

export function openOperatorSession(
  box: SecretBox,
  value: string | undefined,
  now: number,
  operatorToken: string | undefined,
): OperatorSessionToken | undefined {
  if (!value || value.length > 1000 || operatorToken === undefined) return undefined;
  try {
    const s = JSON.parse(box.open(`enc:v1:${value}`)) as Partial<OperatorSessionToken> & { v?: number; kind?: string };
    if (
      s.v !== 1 ||
      s.kind !== 'operator' ||
      typeof s.token !== 'string' ||
      typeof s.csrf !== 'string' ||
      typeof s.exp !== 'number'
    )
      return undefined;
    if (s.exp <= now || !sameToken(s.token, operatorTokenDigest(operatorToken))) return undefined;
    return { token: s.token, exp: s.exp, csrf: s.csrf };
  } catch {
    return undefined;
  }
}

export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function setCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  name: string,
  value: string,
  maxAgeSec: number,
  path = '/console',
): void {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  const cookie = `${name}=${value}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSec}${secure}`;
  const prev = reply.getHeader('set-cookie');
  reply.header(
    'set-cookie',
    prev === undefined ? [cookie] : [...(Array.isArray(prev) ? prev : [String(prev)]), cookie],
  );
}
