// Card templates (docs/console.md "Pages"): list, create from a definition with the API's
// validation and messages, the template's layout and PDF, delete; through CardTemplateService.
import { api, ApiError, isApiError, messageOf } from '@boxhub/protocol';
import type { FastifyInstance } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import { dangers } from './dangers.ts';
import { askFirst, confirmed, enc, formOf, idParam, sess, show, type ConsoleOptions } from './kit.ts';
import { EXAMPLE_DEFINITION, templatesView, templateView } from './template-views.ts';

/** Answers that are about what was typed: the form comes back with them. */
const FORM_ERRORS = new Set(['INVALID_PARAMETER', 'CARD_DEFINITION_INVALID', 'CARD_TEMPLATE_LIMIT']);

/** A definition with a class list stays far below the API's 1 MiB; form encoding can triple it. */
const CREATE_BODY_LIMIT = 3 * 1024 * 1024;

/** The API's create body from the form: the definition's JSON and one "id, name" a line. */
function createBody(definition: string, students: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(definition);
  } catch (e) {
    throw new ApiError('INVALID_PARAMETER', `body.definition is not valid JSON: ${messageOf(e)}`);
  }
  const lines = students
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const list = lines.map((l) => {
    const comma = l.indexOf(',');
    if (comma < 0) return { student_id: l };
    const name = l.slice(comma + 1).trim();
    return { student_id: l.slice(0, comma).trim(), ...(name ? { name } : {}) };
  });
  return { definition: parsed, ...(list.length ? { students: list } : {}) };
}

export function templatePages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  app.get<{ Querystring: { msg?: string } }>('/console/templates', async (req, reply) => {
    const { appId, csrf } = sess(req);
    return show(
      reply,
      req,
      'Card templates',
      templatesView(
        await s.templates.list(appId),
        csrf,
        { definition: EXAMPLE_DEFINITION, students: '' },
        req.query.msg,
      ),
    );
  });

  app.post('/console/templates/create', { bodyLimit: CREATE_BODY_LIMIT }, async (req, reply) => {
    const { appId, csrf } = sess(req);
    const form = formOf(req);
    const definition = form.definition ?? '';
    const students = form.students ?? '';
    try {
      const body = checkBody(api.CardTemplateCreateBody, createBody(definition, students));
      const t = await s.templates.create(appId, body);
      return reply.redirect(`/console/templates/${enc(t.template_id)}?msg=template_created`, 303);
    } catch (e) {
      // The form again, with what was typed and the API's message for it.
      if (!isApiError(e) || !FORM_ERRORS.has(e.key)) throw e;
      reply.code(400);
      return show(
        reply,
        req,
        'Card templates',
        templatesView(
          await s.templates.list(appId),
          csrf,
          { definition, students },
          undefined,
          `${e.message} (code ${e.code})`,
        ),
      );
    }
  });

  app.get<{ Params: { id: string }; Querystring: { msg?: string } }>('/console/templates/:id', async (req, reply) => {
    const { appId, csrf } = sess(req);
    const t = await s.templates.get(appId, idParam(req.params.id));
    return show(reply, req, `Card template ${t.template_id}`, templateView(t, csrf, req.query.msg));
  });

  app.post<{ Params: { id: string } }>('/console/templates/:id/delete', async (req, reply) => {
    const { appId } = sess(req);
    const id = idParam(req.params.id);
    if (!confirmed(req)) return askFirst(reply, req, dangers.deleteTemplate(await s.templates.get(appId, id)));
    await s.templates.delete(appId, id);
    return reply.redirect('/console/templates?msg=template_deleted', 303);
  });
}
