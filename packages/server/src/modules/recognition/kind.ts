// The recognition kind (docs/cards.md, docs/tasks.md): what it declares, listed in
// modules/kinds.ts. Its tasks have no box: no box events, requests or commands; its pages come
// through its own receiver (a direct transfer signed with the scan's secret) and are read by
// its jobs.
import { TRANSITIONS } from '@boxhub/protocol';
import type { KindContext, TaskKindModule } from '../kind-module.ts';
import { AnnotatedLinks } from './annotated-links.ts';
import { annotatedRoute } from './annotated-route.ts';
import { directReceiverRoutes } from './receiver.ts';
import { reviewRoutes } from './review-routes.ts';
import { recognitionRoutes } from './routes.ts';
import { ASSEMBLE_JOB, PAGE_JOB, RecognitionService, type RecognitionServiceDeps } from './service.ts';
import { RecognitionWorkers } from './worker.ts';

/** The kind's dependencies, from the shared parts: the service, the receiver, the jobs and the
 *  review loop (services.ts) each take what they use of them, none through another. */
export function recognitionDeps(c: KindContext): RecognitionServiceDeps {
  return {
    tasks: c.tasks,
    repo: c.repos.recognition,
    lifecycle: c.lifecycle,
    callbacks: c.callbacks,
    jobs: c.jobs,
    blobs: c.blobs,
    clock: c.clock,
    log: c.log,
    publicUrl: c.publicUrl,
    settings: c.settings.recognition,
    directSecrets: c.directSecrets,
    // Links to each page's annotated image, carried by the result callbacks (review loop);
    // stateless, so each part's copy makes the same links.
    annotated: new AnnotatedLinks(c.secretBox, c.publicUrl, c.clock),
  };
}

export const recognitionKind: TaskKindModule<'recognition', RecognitionService> = {
  kind: 'recognition',
  onBox: false,
  transitions: TRANSITIONS.filter((t) => t.kinds.includes('recognition')),
  events: [],
  requests: [],
  commands: [],
  callbacks: ['recognition.result', 'recognition.end', 'recognition.revision'],
  jobs: [PAGE_JOB, ASSEMBLE_JOB],
  needs: [],
  build: (c) => new RecognitionService(recognitionDeps(c)),
  wire: (recognition, c) => {
    // The engine's threads start with the first page, not with the server.
    const workers = new RecognitionWorkers(recognitionDeps(c), {
      work: c.work,
      ...(c.settings.recognition.workers ? { workers: c.settings.recognition.workers } : {}),
    });
    return {
      hooks: recognition.hooks(),
      events: {},
      requests: {},
      jobs: [workers.pageHandler(), workers.assembleHandler()],
      close: () => workers.close(),
    };
  },
  routes: async (api, recognition, r) => {
    await api.register(recognitionRoutes, { recognition, templates: r.templates });
    await api.register(reviewRoutes, { review: r.review });
  },
  // Annotated page images: the sealed link is the credential (annotated-links.ts). Direct
  // transfers: signed by the scan's direct secret, with their own body limit (docs/direct-transfer.md).
  publicRoutes: async (app, _recognition, r) => {
    await app.register(annotatedRoute, { review: r.review });
    await app.register(directReceiverRoutes, { deps: recognitionDeps(r.kinds), maxPageBytes: r.directMaxPageBytes });
  },
};
