// Wires repositories and services together: one object the HTTP routes, the box link, the
// CLI and the tests all use, so the rules live in one place.
import type { Logger } from 'pino';
import type { BoxGateway } from './box-link/gateway.ts';
import type { JobEventRouter } from './box-link/job-events.ts';
import type { BoxRequestRouter } from './box-link/requests.ts';
import type { Clock } from './clock.ts';
import type { Db } from './db/connect.ts';
import type { Jobs } from './jobs/jobs.ts';
import { FleetService } from './modules/fleet/service.ts';
import { ReleaseService } from './modules/releases/service.ts';
import { RolloutService, type RolloutSettings } from './modules/rollouts/service.ts';
import { ApplicationRepository } from './modules/applications/repository.ts';
import { ApplicationService } from './modules/applications/service.ts';
import { CallbackRepository } from './modules/callbacks/repository.ts';
import { CallbackService, type CallbackServiceSettings } from './modules/callbacks/service.ts';
import { ControlService } from './modules/control/service.ts';
import { DeviceRepository } from './modules/devices/repository.ts';
import { DeviceService } from './modules/devices/service.ts';
import { E2eKeyRepository } from './modules/e2e-keys/repository.ts';
import { E2eKeyService } from './modules/e2e-keys/service.ts';
import type { SecretBox } from './secret-box.ts';
import type { WorkGate } from './work-gate.ts';
import { ScanItemRepository } from './modules/scan/repository.ts';
import type { ScanSettings } from './modules/scan/service.ts';
import { ScanDirectSecrets } from './modules/scan/direct-secrets.ts';
import type { PrintSettings } from './modules/print/service.ts';
import type { Dispatcher } from 'undici';
import type { BlobStore } from './storage/blob-store.ts';
import { TaskLifecycle } from './tasks/lifecycle.ts';
import { TaskRepository } from './tasks/repository.ts';
import { RecognitionRepository } from './modules/recognition/repository.ts';
import type { RecognitionSettings } from './modules/recognition/service.ts';
import { buildKinds } from './modules/kinds.ts';
import type { KindContext } from './modules/kind-module.ts';
import { recognitionDeps } from './modules/recognition/kind.ts';
import { CardTemplateService } from './modules/recognition/templates.ts';
import { CorrectionRepository } from './modules/recognition/review-repository.ts';
import { ReviewService } from './modules/recognition/review.ts';
import { DeviceEventRepository } from './modules/device-events/repository.ts';
import { DEFAULT_SETTLE_MS, DeviceEventService } from './modules/device-events/service.ts';
import { deviceStateRecorder } from './modules/task-history/device-states.ts';
import { TaskHistoryService } from './modules/task-history/service.ts';

/** `box` encrypts what the server must read back (callback secrets); see secret-box.ts. */
export function createRepositories(db: Db, box: SecretBox) {
  const applications = new ApplicationRepository(db.kysely, box);
  return {
    applications,
    devices: new DeviceRepository(db.kysely, { dataVersion: db.dataVersion }),
    callbacks: new CallbackRepository(db.kysely, db.dialect, applications),
    tasks: new TaskRepository(db.kysely),
    scanItems: new ScanItemRepository(db.kysely),
    e2eKeys: new E2eKeyRepository(db.kysely),
    recognition: new RecognitionRepository(db.kysely),
    deviceEvents: new DeviceEventRepository(db.kysely),
  };
}
export type Repositories = ReturnType<typeof createRepositories>;

export interface ServiceSettings {
  callbacks: CallbackServiceSettings;
  scan: ScanSettings;
  print: PrintSettings;
  recognition: RecognitionSettings;
  /** Device events: how long a change must hold before it is reported (docs/callbacks.md, "Device events"). */
  deviceEventSettleMs?: number;
  /** SQLite's data_version: lets authentication remember keys exactly (ApplicationService). */
  dataVersion?: () => number;
  onError?: (err: unknown, what: string) => void;
  /** Rollout steps and sends (tests make steps short). */
  rollouts?: Partial<RolloutSettings>;
}

/** What the services need besides repositories: the box link, delayed work, files, time. */
export interface ServiceDeps {
  gateway: BoxGateway;
  events: JobEventRouter;
  requests: BoxRequestRouter;
  jobs: Jobs;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** HTTP client for user-supplied URLs (print file_url), through the URL guard. */
  fetcher: Dispatcher;
  /** This service's public base URL (recognition addresses). */
  publicUrl: () => string;
  /** Seals secrets the server reads back (direct-transfer secrets of scan tasks). */
  secretBox: SecretBox;
  /** The node-wide bound on document and image work (work-gate.ts). */
  work: WorkGate;
}

export function createServices(repos: Repositories, deps: ServiceDeps, settings: ServiceSettings) {
  const { gateway, jobs, clock } = deps;
  const applications = new ApplicationService(repos.applications, clock, {
    ...(settings.dataVersion ? { dataVersion: settings.dataVersion } : {}),
    onTouchError: (err) => settings.onError?.(err, 'recording the last use of an API key'),
  });
  const devices = new DeviceService(repos.devices, clock, { jobs, log: deps.log });
  const control = new ControlService(devices, repos.devices, gateway, clock);
  const callbacks = new CallbackService(repos.callbacks, jobs, clock, settings.callbacks);
  const e2eKeys = new E2eKeyService(repos.e2eKeys, clock);
  const deviceEvents = new DeviceEventService({
    repo: repos.deviceEvents,
    callbacks,
    jobs,
    clock,
    log: deps.log,
    settleMs: settings.deviceEventSettleMs ?? DEFAULT_SETTLE_MS,
  });
  gateway.onState((uuid) => deviceEvents.seen(uuid));
  gateway.onState(deviceStateRecorder(repos.tasks, clock, deps.log));
  gateway.onPresence((uuid) => deviceEvents.seen(uuid));
  const lifecycle = new TaskLifecycle({ tasks: repos.tasks, jobs, blobs: deps.blobs, clock, log: deps.log });
  gateway.onState((uuid, state) => lifecycle.reconcile(uuid, state));
  deps.events.beforeFirst = (trx, task, now) => lifecycle.acknowledge(trx, task, now);
  devices.onUnbind((appId, uuid, createdBefore) => lifecycle.endForApp(appId, uuid, createdBefore));
  // Every task kind (modules/kinds.ts): built from its declaration, its box events, requests
  // and hooks registered. Scan create seals a task's direct secret; the recognition receiver opens it.
  const kindContext: KindContext = {
    repos,
    tasks: repos.tasks,
    lifecycle,
    devices,
    e2eKeys,
    callbacks,
    gateway,
    jobs,
    blobs: deps.blobs,
    clock,
    log: deps.log,
    fetcher: deps.fetcher,
    work: deps.work,
    publicUrl: deps.publicUrl,
    secretBox: deps.secretBox,
    directSecrets: new ScanDirectSecrets(deps.secretBox),
    settings,
  };
  const kinds = buildKinds(kindContext, deps.events, deps.requests);
  const { scan, print, recognition } = kinds.services;
  const review = new ReviewService(recognitionDeps(kindContext), new CorrectionRepository(repos.recognition.db));
  const templates = new CardTemplateService(repos.recognition, deps.blobs, clock);
  const history = new TaskHistoryService(repos.tasks);
  // Running a fleet (docs/updates.md, docs/fleet.md).
  const releases = new ReleaseService({ db: jobs.db, blobs: deps.blobs, gateway, clock });
  const rollouts = new RolloutService({
    db: jobs.db,
    jobs,
    releases,
    clock,
    log: deps.log,
    ...(settings.rollouts ? { settings: settings.rollouts } : {}),
  });
  const fleet = new FleetService({ db: jobs.db, devices, clock });
  gateway.onState(async (uuid, state) => {
    await fleet.state(uuid, state);
    await rollouts.nudge(uuid);
  });
  gateway.onPresence(async (uuid, online) => {
    await fleet.presence(uuid, online);
    if (online) await rollouts.nudge(uuid);
  });
  return {
    releases,
    rollouts,
    fleet,
    applications,
    devices,
    control,
    callbacks,
    e2eKeys,
    lifecycle,
    kinds,
    scan,
    print,
    recognition,
    templates,
    review,
    deviceEvents,
    history,
    work: deps.work,
  };
}
export type Services = ReturnType<typeof createServices>;
