// The print kind (docs/printing.md, docs/tasks.md): what it declares, listed in modules/kinds.ts.
import { TRANSITIONS } from '@boxhub/protocol';
import type { TaskKindModule } from '../kind-module.ts';
import { COUNT_JOB } from './cancel-count.ts';
import { printRoutes } from './routes.ts';
import { PrintService } from './service.ts';

export const printKind: TaskKindModule<'print', PrintService> = {
  kind: 'print',
  onBox: true,
  transitions: TRANSITIONS.filter((t) => t.kinds.includes('print')),
  events: ['print.downloaded', 'print.started', 'print.progress', 'print.finished'],
  requests: ['download.url'],
  commands: ['print.start', 'print.cancel'],
  callbacks: ['print.ack', 'print.started', 'print.finished'],
  jobs: [COUNT_JOB],
  needs: [],
  build: (c) =>
    new PrintService({
      tasks: c.tasks,
      lifecycle: c.lifecycle,
      devices: c.devices,
      gateway: c.gateway,
      callbacks: c.callbacks,
      blobs: c.blobs,
      fetcher: c.fetcher,
      work: c.work,
      clock: c.clock,
      log: c.log,
      settings: c.settings.print,
      jobs: c.jobs,
    }),
  wire: (print) => print.wiring(),
  routes: async (api, print, r) => {
    await api.register(printRoutes, { print, createBodyLimit: r.printBodyLimit, work: r.work });
  },
};
