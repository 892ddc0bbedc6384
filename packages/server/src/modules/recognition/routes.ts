import { api } from '@boxhub/protocol';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okNull } from '../../http/envelope.ts';
import type { RecognitionService } from './service.ts';
import type { CardTemplateService } from './templates.ts';

const tags = ['recognition'];

export const recognitionRoutes: FastifyPluginAsyncTypebox<{
  recognition: RecognitionService;
  templates: CardTemplateService;
}> = async (app, { recognition, templates }) => {
  app.post(
    '/api/application/ess/create',
    {
      schema: {
        tags,
        summary:
          "Create a recognition task: give its direct_addr to one scan create (direct_mode 1 or 2); each student's result is POSTed to callback_url, then the end is PUT (20005 without the capability)",
        body: api.EssCreateBody,
        response: { 200: api.EssCreateResponse },
      },
    },
    async (req) => ok(await recognition.create(req.application, req.body)),
  );

  app.post(
    '/api/application/card/template/create',
    {
      // A card definition with a class list of personalised cards stays far below this.
      bodyLimit: 1024 * 1024,
      schema: {
        tags,
        summary:
          'Create a card template from a card definition (docs/cards.md): its id, a 1-hour link to the printable PDF, the layout',
        body: api.CardTemplateCreateBody,
        response: { 200: api.CardTemplateResponse },
      },
    },
    async (req) => ok(await templates.create(req.application.id, req.body)),
  );

  app.post(
    '/api/application/card/template/list',
    {
      schema: {
        tags,
        summary: "The application's card templates (without their layouts)",
        body: api.CardTemplateListBody,
        response: { 200: api.CardTemplateListResponse },
      },
    },
    async (req) => ok(await templates.list(req.application.id)),
  );

  app.post(
    '/api/application/card/template/info',
    {
      schema: {
        tags,
        summary: 'One card template with its layout and a fresh PDF link',
        body: api.CardTemplateIdBody,
        response: { 200: api.CardTemplateResponse },
      },
    },
    async (req) => ok(await templates.get(req.application.id, req.body.template_id)),
  );

  app.post(
    '/api/application/card/template/delete',
    {
      schema: {
        tags,
        summary: 'Delete a card template and its PDF; its cards are no longer recognized for this application',
        body: api.CardTemplateIdBody,
        response: { 200: api.CardTemplateDeleteResponse },
      },
    },
    async (req) => {
      await templates.delete(req.application.id, req.body.template_id);
      return okNull;
    },
  );
};
