// Wires repositories and services together: one object the HTTP routes, the box link, the
// CLI and the tests all use, so the rules live in one place.
import type { BoxGateway } from './box-link/gateway.ts';
import type { Clock } from './clock.ts';
import type { Db } from './db/connect.ts';
import { ApplicationRepository } from './modules/applications/repository.ts';
import { ApplicationService } from './modules/applications/service.ts';
import { CallbackRepository } from './modules/callbacks/repository.ts';
import { CallbackService, type CallbackServiceSettings } from './modules/callbacks/service.ts';
import { ControlService } from './modules/control/service.ts';
import { DeviceRepository } from './modules/devices/repository.ts';
import { DeviceService } from './modules/devices/service.ts';

export function createRepositories(db: Db) {
  return { applications: new ApplicationRepository(db.kysely), devices: new DeviceRepository(db.kysely), callbacks: new CallbackRepository(db.kysely, db.dialect) };
}
export type Repositories = ReturnType<typeof createRepositories>;

export interface ServiceSettings { callbacks?: CallbackServiceSettings }

export function createServices(repos: Repositories, gateway: BoxGateway, clock: Clock, settings: ServiceSettings = {}) {
  const applications = new ApplicationService(repos.applications, clock);
  const devices = new DeviceService(repos.devices, clock);
  const control = new ControlService(devices, repos.devices, gateway, clock);
  const callbacks = new CallbackService(repos.callbacks, clock, settings.callbacks ?? { allowPrivateNetworks: false, secretGraceMs: 86_400_000 });
  return { applications, devices, control, callbacks };
}
export type Services = ReturnType<typeof createServices>;
