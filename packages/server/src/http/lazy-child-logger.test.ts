import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { lazyChildLogger } from './lazy-child-logger.ts';

test('lines written through a request logger carry the request id; disabled levels write nothing', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const app = Fastify({
    loggerInstance: pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger,
    childLoggerFactory: lazyChildLogger,
    genReqId: () => 'req-42',
  });
  app.get('/x', async (req) => {
    req.log.debug('not written');
    req.log.warn({ detail: 1 }, 'written');
    req.log.child({ sub: 'y' }).error('nested');
    return { ok: true, level: req.log.level };
  });
  const r = await app.inject({ method: 'GET', url: '/x' });
  assert.deepEqual(r.json(), { ok: true, level: 'info' });
  await app.close();
  const mine = lines.filter((l) => l.msg === 'written' || l.msg === 'nested' || l.msg === 'not written');
  assert.deepEqual(
    mine.map((l) => [l.msg, l.reqId]),
    [
      ['written', 'req-42'],
      ['nested', 'req-42'],
    ],
  );
  assert.equal(mine[0]?.detail, 1);
  assert.equal(mine[1]?.sub, 'y');
});
