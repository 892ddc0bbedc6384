// What every console route file shares: its options, the signed-in session (an application's
// or the operator's), form bodies, ids from the path, and the page and fragment answers.
import { ApiError } from '@boxhub/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.ts';
import type { ApiLimits } from '../../http/rate-limits.ts';
import type { ConsoleSignouts } from './repository.ts';
import type { SecretBox } from '../../secret-box.ts';
import type { TaskLifecycle } from '../../tasks/lifecycle.ts';
import type { WorkGate } from '../../work-gate.ts';
import type { ApplicationService } from '../applications/service.ts';
import type { CallbackService } from '../callbacks/service.ts';
import type { ControlService } from '../control/service.ts';
import type { DeviceEventService } from '../device-events/service.ts';
import type { CredentialHooks, DeviceService } from '../devices/service.ts';
import type { E2eKeyService } from '../e2e-keys/service.ts';
import type { FleetService } from '../fleet/service.ts';
import type { PrintService } from '../print/service.ts';
import type { ReviewService } from '../recognition/review.ts';
import type { RecognitionService } from '../recognition/service.ts';
import type { CardTemplateService } from '../recognition/templates.ts';
import type { ReleaseService } from '../releases/service.ts';
import type { RolloutService } from '../rollouts/service.ts';
import type { ScanService } from '../scan/service.ts';
import type { TaskHistoryService } from '../task-history/service.ts';
import type { Danger } from './dangers.ts';
import type { Html } from './html.ts';
import { page, type PageContext } from './layout.ts';
import { CONFIRMED_FIELD, confirmView } from './widgets.ts';

/** The services the console's pages call, the same the API's routes call. The wiring
 *  (services.ts) builds them and sits above the modules: the console names only what it reads. */
export interface ConsoleServices {
  applications: ApplicationService;
  callbacks: CallbackService;
  control: ControlService;
  deviceEvents: DeviceEventService;
  devices: DeviceService;
  e2eKeys: E2eKeyService;
  fleet: FleetService;
  history: TaskHistoryService;
  lifecycle: TaskLifecycle;
  print: PrintService;
  recognition: RecognitionService;
  releases: ReleaseService;
  review: ReviewService;
  rollouts: RolloutService;
  scan: ScanService;
  templates: CardTemplateService;
  work: WorkGate;
}

export interface ConsoleOptions {
  services: ConsoleServices;
  box: SecretBox;
  limits: ApiLimits;
  clock: Clock;
  /** Largest PDF the print form takes (the API's print body limit). */
  printBodyLimit: number;
  /** BOXHUB_OPERATOR_TOKEN; unset: no operator sign-in (as the operator API is off). */
  operatorToken?: string | undefined;
  /** What the broker does when an operator changes a box's credentials (as the operator API). */
  credentialHooks?: CredentialHooks;
  /** Signed-out sessions, in the database every node reads (repository.ts). */
  signouts: ConsoleSignouts;
  /** BOXHUB_PUBLIC_URL (or the listen address): its origin is this server's for the Origin check. */
  publicUrl?: () => string;
}

export interface ConsoleSession {
  appId: string;
  appName: string;
  keyId: string;
  csrf: string;
}
export interface OperatorSession {
  csrf: string;
}
declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null;
    operatorSession: OperatorSession | null;
  }
}

/** A refusal with its HTTP status (the console answers pages, not the API's envelope). */
export class Refused extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
export const CSRF_REFUSED = "the form's CSRF token is missing or wrong; reload the page and try again";

export type Form = Record<string, string | undefined>;
export const formOf = (req: FastifyRequest): Form => (req.body ?? {}) as Form;

const ID = /^[A-Za-z0-9_.:-]{1,100}$/;
/** An id taken from the path: anything else is a page that does not exist. */
export function idParam(raw: string): string {
  if (!ID.test(raw)) throw new ApiError('NOT_FOUND', 'no such page');
  return raw;
}
export function pageNumber(raw: string | undefined): number {
  const n = Number(raw ?? 1);
  return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : 1;
}

export function sess(req: FastifyRequest): ConsoleSession {
  if (!req.consoleSession) throw new Refused(403, "sign in with an application's API key");
  return req.consoleSession;
}
/** The operator's session; every operator page asks for it before it does anything. */
export function operatorOf(req: FastifyRequest): OperatorSession {
  if (!req.operatorSession) throw new Refused(403, 'sign in as the operator');
  return req.operatorSession;
}
export function ctx(req: FastifyRequest): PageContext {
  if (req.operatorSession) return { operator: true, csrf: req.operatorSession.csrf };
  return req.consoleSession ? { appName: req.consoleSession.appName, csrf: req.consoleSession.csrf } : {};
}
export const show = (reply: FastifyReply, req: FastifyRequest, title: string, body: Html) =>
  reply.type('text/html; charset=utf-8').send(page(title, ctx(req), body));
export const fragment = (reply: FastifyReply, body: Html) => reply.type('text/html; charset=utf-8').send(body.text);
export const enc = encodeURIComponent;

/** Whether a destructive form was confirmed (docs/console.md "Confirmation"). */
export const confirmed = (req: FastifyRequest): boolean => formOf(req)[CONFIRMED_FIELD] === '1';
/**
 * The answer to a destructive form that was not confirmed: the confirmation page, nothing done.
 * Every destructive route calls it first: `if (!confirmed(req)) return askFirst(...)`.
 */
export const askFirst = (reply: FastifyReply, req: FastifyRequest, d: Danger) => {
  const session = req.operatorSession ?? req.consoleSession;
  if (!session) throw new Refused(403, 'sign in first');
  return show(reply, req, 'Are you sure?', confirmView(d, session.csrf));
};
