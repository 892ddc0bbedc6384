// The operator's fleet pages (docs/console.md "Fleet"), over the services the operator API uses
// (docs/fleet.md, docs/updates.md). The operator's session is checked by operatorPages' hook.
import { api } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import { enc, formOf, idParam, operatorOf, show, type ConsoleOptions } from './kit.ts';
import { boxHistoryView, fleetView, rolloutsView, rolloutView } from './fleet-views.ts';
import { OPERATOR_PATH } from './session.ts';

const int = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined);

export function fleetPages(app: FastifyInstance, o: ConsoleOptions): void {
  const { fleet, rollouts, releases } = o.services;
  app.get<{ Querystring: { label?: string } }>(`${OPERATOR_PATH}/fleet`, async (req, reply) => {
    const label = req.query.label || undefined;
    const [all, boxes] = await Promise.all([fleet.boxes(), label ? fleet.boxes({ label }) : undefined]);
    const shown = boxes ?? all;
    return show(reply, req, 'Fleet', fleetView(fleet.summary(shown), shown, label));
  });
  app.get<{ Params: { uuid: string } }>(`${OPERATOR_PATH}/fleet/:uuid`, async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const box = (await fleet.boxes()).find((b) => b.uuid === uuid);
    if (!box) return reply.code(404).type('text/html; charset=utf-8').send('no such box');
    return show(reply, req, `Box ${box.code}`, boxHistoryView(box, await fleet.history(uuid)));
  });
  app.get(`${OPERATOR_PATH}/rollouts`, async (req, reply) => {
    const [list, rels, summary] = await Promise.all([
      rollouts.list(),
      releases.list(),
      fleet.boxes().then((b) => fleet.summary(b)),
    ]);
    return show(
      reply,
      req,
      'Rollouts',
      rolloutsView(
        list,
        rels,
        summary.labels.map((l) => l.label),
        operatorOf(req).csrf,
      ),
    );
  });
  app.get<{ Params: { id: string } }>(`${OPERATOR_PATH}/rollouts/:id`, async (req, reply) =>
    show(reply, req, 'Rollout', rolloutView(await rollouts.view(idParam(req.params.id)), operatorOf(req).csrf)),
  );
  app.post(`${OPERATOR_PATH}/rollouts/create`, async (req, reply) => {
    const f = formOf(req);
    const body = checkBody(api.RolloutCreateBody, {
      release_id: f.release_id ?? '',
      ...(f.label ? { label: f.label } : { percent: int(f.percent) ?? 100 }),
      waves: int(f.waves) ?? 3,
      wave_pause_s: int(f.wave_pause_s) ?? 600,
      max_failed_pct: int(f.max_failed_pct) ?? 10,
    });
    const r = await rollouts.create(body);
    return reply.redirect(`${OPERATOR_PATH}/rollouts/${enc(r.id)}`, 303);
  });
  app.post<{ Params: { id: string } }>(`${OPERATOR_PATH}/rollouts/:id/cancel`, async (req, reply) => {
    const id = idParam(req.params.id);
    await rollouts.cancel(id);
    return reply.redirect(`${OPERATOR_PATH}/rollouts/${enc(id)}`, 303);
  });
}
