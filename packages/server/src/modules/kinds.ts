// Every task kind the server runs (docs/tasks.md, "Adding a task kind"): one line each. Each
// kind's folder declares it (its kind.ts, kind-module.ts says what a declaration holds);
// buildKinds builds the kinds' services and registers what they declare with the box link's
// routers and the task lifecycle. The order is the order of their routes in the API (and so
// in /openapi.json); a kind is built after the kinds it needs.
import type { TaskKind } from '@boxhub/protocol';
import type { EventApplier, EventCheck, JobEventRouter } from '../box-link/job-events.ts';
import type { BoxRequestRouter, RequestHandler } from '../box-link/requests.ts';
import type { JobHandler } from '../jobs/runner.ts';
import type { KindContext, KindRouteContext, KindWiring, TaskKindModule } from './kind-module.ts';
import type { FastifyInstance } from 'fastify';
import { printKind } from './print/kind.ts';
import { recognitionKind } from './recognition/kind.ts';
import { scanKind } from './scan/kind.ts';

export const TASK_KINDS = [scanKind, printKind, recognitionKind] as const;

type AnyKind = TaskKindModule<TaskKind, unknown>;
/** Each kind's service, by kind. */
export type KindServices = {
  [M in (typeof TASK_KINDS)[number] as M['kind']]: M extends TaskKindModule<TaskKind, infer S> ? S : never;
};

export interface BuiltKinds {
  services: KindServices;
  /** A kind's service, by its name (for what reads the table, not one kind). */
  serviceOf(kind: TaskKind): unknown;
  /** Each kind's wiring, as registered (the kinds test reads it). */
  wiring: Map<TaskKind, KindWiring>;
  /** The kinds' job handlers, for the job runner. */
  jobs: JobHandler[];
  /** Stops what the kinds run besides their jobs. */
  close(): Promise<void>;
  /** The shared parts the kinds were built from (their routes build their own parts from it). */
  context: KindContext;
}

/**
 * Builds every kind's service and registers its lifecycle hooks, box event appliers and box
 * request handlers. A kind whose handlers do not match what it declares (one missing, or one
 * it does not declare) stops the server here: the declaration is what the docs and the
 * tests read.
 */
export function buildKinds(
  ctx: KindContext,
  events: JobEventRouter,
  requests: BoxRequestRouter,
  kinds: readonly AnyKind[] = TASK_KINDS,
): BuiltKinds {
  const built: Partial<Record<TaskKind, unknown>> = {};
  const pending = [...kinds];
  while (pending.length > 0) {
    const next = pending.findIndex((m) => m.needs.every((n) => n in built));
    if (next < 0)
      throw new Error(
        `task kinds that need each other or a kind not listed: ${pending.map((m) => `${m.kind} needs ${m.needs.join(', ')}`).join('; ')}`,
      );
    const [m] = pending.splice(next, 1) as [AnyKind];
    built[m.kind] = m.build(ctx, built);
  }
  const wiring = new Map<TaskKind, KindWiring>();
  const jobs: JobHandler[] = [];
  const closes: (() => Promise<void>)[] = [];
  for (const m of kinds) {
    const w = m.wire(built[m.kind], ctx);
    checkWiring(m, w);
    wiring.set(m.kind, w);
    ctx.lifecycle.registerKind(m.kind, w.hooks, { onBox: m.onBox });
    // checkWiring found each one; the casts only forget which event or request type it is for.
    for (const type of m.events)
      events.on(m.kind, type, w.events[type] as EventApplier, w.checks?.[type] as EventCheck | undefined);
    for (const type of m.requests) requests.on(type, w.requests[type] as RequestHandler<typeof type>);
    jobs.push(...w.jobs);
    if (w.close) closes.push(w.close);
  }
  return {
    services: built as KindServices,
    serviceOf: (kind) => built[kind],
    context: ctx,
    wiring,
    jobs,
    close: async () => {
      for (const c of closes) await c();
    },
  };
}

/** Throws unless the handlers are exactly what the kind declares. */
export function checkWiring(m: AnyKind, w: KindWiring): void {
  const same = (what: string, declared: readonly string[], handled: readonly string[]) => {
    const missing = declared.filter((x) => !handled.includes(x));
    const extra = handled.filter((x) => !declared.includes(x));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `task kind ${m.kind}: ${what}${missing.length ? ` declared without a handler: ${missing.join(', ')}` : ''}${extra.length ? ` handled but not declared: ${extra.join(', ')}` : ''}`,
      );
    }
  };
  same('box events', m.events, Object.keys(w.events));
  // A check comes with its event's applier (EventCheck): one of an event not declared is stray.
  const stray = Object.keys(w.checks ?? {}).filter((t) => !(m.events as readonly string[]).includes(t));
  if (stray.length > 0) throw new Error(`task kind ${m.kind}: checks of box events not declared: ${stray.join(', ')}`);
  same('box requests', m.requests, Object.keys(w.requests));
  same(
    'jobs',
    m.jobs,
    w.jobs.map((j) => j.kind),
  );
}

/** Registers one kind's API routes (`routes`) or its routes with credentials of their own
 *  (`publicRoutes`), with its built service. */
export async function registerKindRoutes(
  m: AnyKind,
  which: 'routes' | 'publicRoutes',
  app: FastifyInstance,
  services: { kinds: BuiltKinds },
  ctx: KindRouteContext,
): Promise<void> {
  await m[which]?.(app, services.kinds.serviceOf(m.kind), ctx);
}
