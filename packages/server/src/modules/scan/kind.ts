// The scan kind (docs/scanning.md, docs/tasks.md): what it declares, listed in modules/kinds.ts.
import { TRANSITIONS } from '@boxhub/protocol';
import type { TaskKindModule } from '../kind-module.ts';
import type { DirectTargets } from './service.ts';
import { ScanService } from './service.ts';
import { scanRoutes } from './routes.ts';

export const scanKind: TaskKindModule<'scan', ScanService> = {
  kind: 'scan',
  onBox: true,
  transitions: TRANSITIONS.filter((t) => t.kinds.includes('scan')),
  events: ['scan.item', 'scan.finished'],
  requests: ['upload.url', 'scan.progress'],
  commands: ['scan.start', 'scan.stop'],
  callbacks: ['scan.item_data', 'scan.finish'],
  jobs: [],
  // A scan to one of this service's recognition addresses is bound to its task when created.
  needs: ['recognition'],
  build: (c, built) =>
    new ScanService({
      tasks: c.tasks,
      items: c.repos.scanItems,
      lifecycle: c.lifecycle,
      devices: c.devices,
      e2eKeys: c.e2eKeys,
      gateway: c.gateway,
      callbacks: c.callbacks,
      blobs: c.blobs,
      directSecrets: c.directSecrets,
      clock: c.clock,
      log: c.log,
      settings: c.settings.scan,
      directTargets: built.recognition as DirectTargets,
    }),
  wire: (scan) => scan.wiring(),
  routes: async (api, scan) => {
    await api.register(scanRoutes, { scan });
  },
};
