// What a task kind declares (docs/tasks.md, "Adding a task kind"): each kind's folder under
// modules/ exports one of these from its kind.ts, and modules/kinds.ts lists them. The server
// builds each kind's service from it and registers what it declares (its box events and
// requests, its lifecycle hooks, its jobs, its routes) in one place (services.ts, server.ts,
// app.ts), so no kind reaches into a router or the lifecycle from its constructor, and a test
// (modules/kinds.test.ts) checks that everything declared has its handler.
import type { BoxRequestType, CommandType, JobEventType, TaskKind, Transition } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { BoxGateway } from '../box-link/gateway.ts';
import type { EventApplier, EventCheck } from '../box-link/job-events.ts';
import type { RequestHandler } from '../box-link/requests.ts';
import type { Clock } from '../clock.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { JobHandler } from '../jobs/runner.ts';
import type { CallbackService } from './callbacks/service.ts';
import type { DeviceService } from './devices/service.ts';
import type { E2eKeyService } from './e2e-keys/service.ts';
import type { CardTemplateService } from './recognition/templates.ts';
import type { ReviewService } from './recognition/review.ts';
import type { ScanDirectSecrets } from './scan/direct-secrets.ts';
import type { PrintSettings } from './print/service.ts';
import type { RecognitionRepository } from './recognition/repository.ts';
import type { RecognitionSettings } from './recognition/service.ts';
import type { ScanItemRepository } from './scan/repository.ts';
import type { ScanSettings } from './scan/service.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { WorkGate } from '../work-gate.ts';
import type { TaskKindHooks, TaskLifecycle } from '../tasks/lifecycle.ts';
import type { TaskRepository } from '../tasks/repository.ts';

/** What a kind's service is built from: the shared parts, built before any kind. */
export interface KindContext {
  /** The kinds' own repositories (services.ts makes them with the others). */
  repos: { scanItems: ScanItemRepository; recognition: RecognitionRepository };
  tasks: TaskRepository;
  lifecycle: TaskLifecycle;
  devices: DeviceService;
  e2eKeys: E2eKeyService;
  callbacks: CallbackService;
  gateway: BoxGateway;
  jobs: Jobs;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** HTTP client for user-supplied URLs, through the URL guard. */
  fetcher: Dispatcher;
  /** The node-wide bound on document and image work (work-gate.ts). */
  work: WorkGate;
  /** This service's public base URL. */
  publicUrl: () => string;
  /** Seals what the server reads back (annotated links). */
  secretBox: import('../secret-box.ts').SecretBox;
  /** Seals and opens scan tasks' direct secrets (scan stores them, recognition reads them). */
  directSecrets: ScanDirectSecrets;
  /** Each kind's settings (from the service's configuration). */
  settings: { scan: ScanSettings; print: PrintSettings; recognition: RecognitionSettings };
}

/** What a kind's routes are registered with besides its own service. */
export interface KindRouteContext {
  work: WorkGate;
  /** Body limit of POST /api/print/create (files may come inline). */
  printBodyLimit: number;
  templates: CardTemplateService;
  review: ReviewService;
  /** Largest page image of a direct transfer to a recognition address. */
  directMaxPageBytes: number;
  /** The shared parts the kinds were built from. */
  kinds: KindContext;
}

/** The handlers a built kind gives for what it declares. */
export interface KindWiring {
  hooks: TaskKindHooks;
  events: { [T in JobEventType]?: EventApplier<T> };
  /** What some of those events need found out before their transaction (EventCheck). */
  checks?: { [T in JobEventType]?: EventCheck<T> };
  requests: { [T in BoxRequestType]?: RequestHandler<T> };
  jobs: JobHandler[];
  /** Stops what the kind runs besides its jobs (worker threads), at shutdown. */
  close?: () => Promise<void>;
}

/** One task kind, declared (modules/<kind>/kind.ts). */
export interface TaskKindModule<K extends TaskKind, S> {
  kind: K;
  /** Whether the kind's tasks run on a box: created through the create handshake with a
   *  `task.unacked` job, ended when their application unbinds the box, named in the task history. */
  onBox: boolean;
  /** Its rows of the transition table (protocol/tasks.ts). */
  transitions: readonly Transition[];
  /** The box's job events about its tasks (docs/box-protocol.md, "Jobs"). */
  events: readonly JobEventType[];
  /** What the box asks the server about its tasks (docs/box-protocol.md, "Requests"). */
  requests: readonly BoxRequestType[];
  /** The commands it sends to the box. */
  commands: readonly CommandType[];
  /** The callback events it sends (docs/callbacks.md). */
  callbacks: readonly string[];
  /** The kinds of the jobs it runs (docs/jobs.md). */
  jobs: readonly string[];
  /** Other kinds whose service it takes (built first). */
  needs: readonly TaskKind[];
  /** Builds its service; `built` holds the services of the kinds it needs. */
  build(ctx: KindContext, built: Partial<Record<TaskKind, unknown>>): S;
  /** The handlers of what it declares. */
  wire(service: S, ctx: KindContext): KindWiring;
  /** Registers its API routes (under the API's access rules and envelope). */
  routes(api: FastifyInstance, service: S, ctx: KindRouteContext): Promise<void>;
  /** Registers routes outside API-key access and the envelope (their own credentials). */
  publicRoutes?(app: FastifyInstance, service: S, ctx: KindRouteContext): Promise<void>;
}
