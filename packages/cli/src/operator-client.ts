// How the fleet commands (`boxhub release`, `boxhub rollout`) reach the operator API: --server /
// BOXHUB_URL and the operator token from --token-file or BOXHUB_OPERATOR_TOKEN (never a flag: a
// command line shows in `ps`). Answers are the API's envelope; a non-zero code fails the
// command with the service's message (docs/cli.md).
import type { Context, Flags } from './command.ts';
import { Failed, messageOf, Unreachable, UsageError } from './exit.ts';
import { secretFrom } from './connection.ts';

export const operatorFlags = {
  server: { type: 'string', arg: 'URL', help: 'the boxhub service (default $BOXHUB_URL, else http://127.0.0.1:8080)' },
  'token-file': {
    type: 'string',
    arg: 'FILE',
    help: 'file holding the operator token (default $BOXHUB_OPERATOR_TOKEN)',
  },
} as const satisfies Flags;

export interface OperatorClient {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export function operatorClient(ctx: Context<typeof operatorFlags>): OperatorClient {
  const v = ctx.values;
  const server = (v.server ?? (process.env.BOXHUB_URL || undefined) ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const token = secretFrom(v['token-file'], '--token-file', 'BOXHUB_OPERATOR_TOKEN');
  if (!token) throw new UsageError('the operator token is needed: set BOXHUB_OPERATOR_TOKEN or give --token-file FILE');
  ctx.server = server;
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${server}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      throw new Unreachable(`cannot reach ${server}: ${messageOf(e)}`);
    }
    const env: unknown = await res.json().catch(() => undefined);
    if (typeof env !== 'object' || env === null || !('code' in env) || typeof env.code !== 'number')
      throw new Failed(`${server}${path} answered HTTP ${res.status} without the API's envelope`);
    const msg = 'msg' in env ? env.msg : undefined;
    if (env.code === 20003)
      throw new Unreachable(
        `the service refused the operator token: error 20003: ${msg ?? ''} (${v['token-file'] ? `--token-file ${v['token-file']}` : 'BOXHUB_OPERATOR_TOKEN'})`,
        env.code,
      );
    if (env.code !== 0) throw new Failed(`error ${env.code}: ${msg ?? 'failed'}`, env.code);
    // The data of this path's answer, of the shape docs/fleet.md gives it: the caller names it.
    return ('data' in env ? env.data : undefined) as T;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}
