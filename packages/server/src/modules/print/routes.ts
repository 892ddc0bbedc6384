import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import { JSON_TYPE } from '../../http/json-body.ts';
import type { WorkGate } from '../../work-gate.ts';
import { heldBody, parsePrintBody, waitForSlot } from './inline-body.ts';
import type { PrintService } from './service.ts';

const tags = ['print'];

export const printRoutes: FastifyPluginAsyncTypebox<{
  print: PrintService;
  createBodyLimit: number;
  work: WorkGate;
}> = async (app, { print, createBodyLimit, work }) => {
  app.get(
    '/api/print/capability',
    {
      schema: {
        tags,
        summary: "The printer's capability tree: media sizes, their types, and what each allows",
        querystring: api.CapabilityQuery,
        response: { 200: api.CapabilityResponse },
      },
    },
    async (req) => ok(await print.capability(req.application.id, req.query.client_uuid)),
  );

  // The file may come inline (Base64): this route takes a larger body than the rest, read in
  // its own way (inline-body.ts): a large body waits for a work slot before it is read, and the
  // file is decoded inside the body's own bytes.
  await app.register(async (scope) => {
    const create = scope.withTypeProvider<TypeBoxTypeProvider>();
    create.removeContentTypeParser(JSON_TYPE);
    create.addContentTypeParser(JSON_TYPE, parsePrintBody);
    create.addHook('preParsing', waitForSlot(work));
    create.post(
      '/api/print/create',
      {
        bodyLimit: createBodyLimit,
        schema: {
          tags,
          summary: `Create a print task from file_url or file_content (Base64; a body of at most ${Math.floor(createBodyLimit / 1048576)} MiB)`,
          body: api.PrintCreateBody,
          response: { 200: api.PrintCreateResponse },
        },
      },
      async (req) => {
        const held = heldBody(req.body);
        try {
          return ok(await print.create(req.application.id, req.body, held));
        } finally {
          held?.release();
        }
      },
    );
  });

  app.post(
    '/api/print/cancel',
    {
      schema: {
        tags,
        summary: "Cancel every print task of the device (received, queued or printing) and empty the box's queue",
        body: api.PrintDeviceBody,
        response: { 200: api.NullEnvelope },
      },
    },
    async (req) => {
      await print.cancel(req.application.id, req.body.client_uuid);
      return okNull;
    },
  );

  app.post(
    '/api/print/info',
    {
      schema: {
        tags,
        summary: 'Status of a print task',
        body: api.PrintInfoBody,
        response: { 200: api.PrintInfoResponse },
      },
    },
    async (req) => ok(await print.info(req.application.id, req.body)),
  );
};
