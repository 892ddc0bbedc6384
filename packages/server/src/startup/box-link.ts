// The box-link step of a start (server.ts): the gateway that sends commands to boxes and hears
// their state (started later, by server.ts), the routers of their job events and requests (docs/box-protocol.md), and the
// jobs table's runner, which the box link's work and everything delayed share.
import type { Logger } from 'pino';
import { BoxGateway } from '../box-link/gateway.ts';
import { JobEventRouter } from '../box-link/job-events.ts';
import { BoxRequestRouter } from '../box-link/requests.ts';
import type { Broker } from '../broker/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { Jobs } from '../jobs/jobs.ts';
import { JobRepository } from '../jobs/repository.ts';
import { JobRunner } from '../jobs/runner.ts';
import type { Repositories } from '../services.ts';
import type { Cleanup } from './cleanup.ts';

export interface BoxLinkStepDeps {
  config: Config;
  db: Db;
  repos: Repositories;
  broker: Broker;
  /** Who hears of each box login the broker accepts (startup/broker.ts). */
  onLogin(listener: (uuid: string) => void): void;
  clock: Clock;
  log: Logger;
  cleanup: Cleanup;
}

export interface StartedBoxLink {
  gateway: BoxGateway;
  events: JobEventRouter;
  requests: BoxRequestRouter;
  jobRepo: JobRepository;
  jobRunner: JobRunner;
  jobs: Jobs;
}

export async function startBoxLink(d: BoxLinkStepDeps): Promise<StartedBoxLink> {
  const { config, db, repos, clock, log } = d;
  const gateway = new BoxGateway({
    broker: d.broker,
    devices: repos.devices,
    clock,
    nodeId: config.nodeId,
    log,
    commandTimeoutMs: config.commandTimeoutMs,
  });
  d.onLogin((uuid) => gateway.loggedIn(uuid));
  // Not started here: it takes box messages only once the services have registered what handles
  // them (server.ts).
  d.cleanup.push(() => gateway.close());
  const jobRepo = new JobRepository(db.kysely, db.dialect);
  const jobRunner = new JobRunner(jobRepo, clock, log, {
    pollMs: config.jobPollMs,
    stopWaitMs: config.callbackTimeoutMs,
  });
  const jobs = new Jobs(jobRepo, jobRunner, clock);
  const events = new JobEventRouter({ db: db.kysely, tasks: repos.tasks, gateway, clock, log });
  const requests = new BoxRequestRouter(gateway, log);
  return { gateway, events, requests, jobRepo, jobRunner, jobs };
}
