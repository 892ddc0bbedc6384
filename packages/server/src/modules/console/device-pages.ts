// The application's devices, their controls, and their scan and print tasks (docs/console.md
// "Pages"), through the services the API uses, with the session's application id.
import { ApiError, api, isApiError, type PrinterCapability } from '@boxhub/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkBody } from '../../http/validation.ts';
import { LARGE_BODY_BYTES } from '../../http/release-memory.ts';
import { BODY_WAIT_MS, HeldBody, INLINE_PLACEHOLDER } from '../print/inline-body.ts';
import { INKJET_OPS, type InkjetOp } from '../control/service.ts';
import { dangers } from './dangers.ts';
import {
  askFirst,
  confirmed,
  CSRF_REFUSED,
  enc,
  formOf,
  fragment,
  idParam,
  pageNumber,
  Refused,
  sess,
  show,
  type ConsoleOptions,
} from './kit.ts';
import { printJobView, printOptionsPart, type PrintChoice } from './print-views.ts';
import { sameToken } from './session.ts';
import { deviceView, devicesView, printLive, printTaskView, scanLive, scanTaskView } from './views.ts';
import { historyView } from './history-views.ts';

export const PRINT_ROUTE = '/console/devices/:uuid/print';
/** The print form's fields besides the file (the multipart limits in routes.ts count them). */
export const PRINT_FIELDS = [
  '_csrf',
  'callback_url',
  'media_size',
  'media_type',
  'color_mode',
  'quality',
  'duplex',
  'input_slot',
  'borderless',
  'number',
  'page_ranges',
  'reverse',
  'collate',
  'strict',
] as const;
const CHOICES = ['media_size', 'media_type', 'color_mode', 'quality', 'duplex', 'input_slot'] as const;

/**
 * The print form's fields as the API's options: a choice left on the printer's default and an
 * empty page range are left out, as a JSON client would; copies are a number when written as
 * one (otherwise the schema answers); the check boxes are true when ticked, else false (the
 * form always has collate and reverse, ticked by default, so unticking them means false).
 */
export function printOptionsOf(f: PrintChoice): api.PrintOptions {
  const o: Record<string, unknown> = {};
  const callback = f.callback_url?.trim();
  if (callback) o.callback_url = callback;
  for (const k of CHOICES) if (f[k]) o[k] = f[k];
  const copies = f.number?.trim();
  if (copies) o.number = /^\d{1,6}$/.test(copies) ? Number(copies) : copies;
  if (f.page_ranges?.trim()) o.page_ranges = f.page_ranges;
  for (const k of ['borderless', 'strict'] as const) if (f[k] === '1') o[k] = true;
  // Sent by the console's own form only when it offers them (every form does).
  if (f.media_size !== undefined) {
    o.collate = f.collate === '1';
    o.reverse = f.reverse === '1';
  }
  return o as api.PrintOptions;
}

/** PDF or JPG, from the file's first bytes (anything else goes as a PDF and is refused as one). */
const fileTypeOf = (file: Buffer): 'pdf' | 'jpg' =>
  file[0] === 0xff && file[1] === 0xd8 && file[2] === 0xff ? 'jpg' : 'pdf';

/** Refusals a device page shows itself (the service's message); the rest go to the error page. */
const shownOnPage = (e: unknown): e is ApiError =>
  isApiError(e) && e.key !== 'NOT_FOUND' && e.key !== 'DEVICE_NOT_FOUND' && e.key !== 'RATE_LIMITED';

export function devicePages(app: FastifyInstance, o: ConsoleOptions): void {
  const { services: s } = o;
  const devUrl = (uuid: string) => `/console/devices/${enc(uuid)}`;

  app.get<{ Querystring: { page?: string; msg?: string } }>('/console/devices', async (req, reply) => {
    const list = await s.devices.list(sess(req).appId, pageNumber(req.query.page));
    return show(reply, req, 'Devices', devicesView(list, sess(req).csrf, req.query.msg));
  });

  // Bind by the code on the box's label: the same lookup (and miss limit) as GET /api/client/get_uuid.
  app.post('/console/devices/bind', async (req, reply) => {
    const form = formOf(req);
    const code = (form.code ?? '').trim();
    const name = (form.name ?? '').trim();
    if (!code || code.length > 64) throw new ApiError('INVALID_PARAMETER', 'the device code must be 1-64 characters');
    if (!name || name.length > 100) throw new ApiError('INVALID_PARAMETER', 'the name must be 1-100 characters');
    const appId = sess(req).appId;
    const uuid = await o.limits.getUuidLookup(req, reply, () => s.devices.getUuid(appId, code));
    await s.devices.bind(appId, { uuid, name });
    return reply.redirect(`${devUrl(uuid)}?msg=bound`, 303);
  });

  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/reboot', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    if (!confirmed(req)) return askFirst(reply, req, dangers.reboot(await s.devices.info(sess(req).appId, uuid)));
    return control(req, reply, uuid, () => s.control.reboot(sess(req).appId, uuid), 'rebooting');
  });

  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/unbind', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    if (!confirmed(req)) return askFirst(reply, req, dangers.unbind(await s.devices.info(sess(req).appId, uuid)));
    await s.devices.unbind(sess(req).appId, uuid);
    return reply.redirect('/console/devices?msg=unbound', 303);
  });

  const capabilityOf = async (
    appId: string,
    uuid: string,
  ): Promise<{ capability?: PrinterCapability; capabilityError?: string }> => {
    try {
      return { capability: await s.print.capability(appId, uuid) };
    } catch (e) {
      if (!isApiError(e)) throw e;
      return { capabilityError: e.message };
    }
  };
  const devicePage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    uuid: string,
    extra: { msg?: string; error?: ApiError; chosen?: PrintChoice } = {},
  ) => {
    const { appId, csrf } = sess(req);
    const client = await s.devices.info(appId, uuid);
    const current = await s.scan.current(appId, uuid);
    const tasks = (await s.lifecycle.recent(appId, uuid)).filter((t) => t.kind === 'scan' || t.kind === 'print');
    if (extra.error) reply.code(400);
    return show(
      reply,
      req,
      client.name ?? uuid,
      deviceView({
        client,
        csrf,
        tasks,
        ...(await capabilityOf(appId, uuid)),
        inkjet: await s.control.inkjetAvailability(appId, uuid),
        ...(current.scan_uuid ? { current: current.scan_uuid } : {}),
        ...(extra.msg ? { msg: extra.msg } : {}),
        ...(extra.error ? { error: `${extra.error.message} (code ${extra.error.code})` } : {}),
        ...(extra.chosen ? { chosen: extra.chosen } : {}),
      }),
    );
  };
  /** Runs a control; a refusal (offline, not supported, the flush window, the box's answer) is shown on the device page. */
  const control = async (
    req: FastifyRequest,
    reply: FastifyReply,
    uuid: string,
    run: () => Promise<void>,
    msg: string,
  ) => {
    try {
      await run();
    } catch (e) {
      if (shownOnPage(e)) return devicePage(req, reply, uuid, { error: e });
      throw e;
    }
    return reply.redirect(`${devUrl(uuid)}?msg=${msg}`, 303);
  };

  app.get<{ Params: { uuid: string }; Querystring: { msg?: string } }>('/console/devices/:uuid', async (req, reply) =>
    devicePage(req, reply, idParam(req.params.uuid), req.query.msg ? { msg: req.query.msg } : {}),
  );

  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/buzz', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    return control(req, reply, uuid, () => s.control.buzz(sess(req).appId, uuid, [200], undefined), 'buzzed');
  });

  // The inkjet operations (as POST /api/control/head_clean, …/nozzle_check, …/power_ink_flush).
  app.post<{ Params: { uuid: string; op: string } }>('/console/devices/:uuid/inkjet/:op', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const op = req.params.op as InkjetOp;
    if (!INKJET_OPS.includes(op)) throw new Refused(404, 'no such page');
    if (!confirmed(req)) {
      const danger = dangers.inkjet(await s.devices.info(sess(req).appId, uuid), op);
      if (danger) return askFirst(reply, req, danger);
    }
    return control(req, reply, uuid, () => s.control.inkjet(sess(req).appId, uuid, op), op);
  });

  // As POST /api/print/cancel: every print task of the box ends, its queue is emptied.
  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/print/cancel', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    if (!confirmed(req)) return askFirst(reply, req, dangers.cancelPrints(await s.devices.info(sess(req).appId, uuid)));
    return control(req, reply, uuid, () => s.print.cancel(sess(req).appId, uuid), 'prints_cancelled');
  });

  // The print options that depend on the chosen media size and type (htmx asks on a change).
  app.get<{ Params: { uuid: string }; Querystring: PrintChoice }>(
    '/console/devices/:uuid/print-options',
    async (req, reply) => {
      const uuid = idParam(req.params.uuid);
      const capability = await s.print.capability(sess(req).appId, uuid);
      const q = req.query;
      const chosen: PrintChoice = {};
      for (const k of [...CHOICES, 'borderless'] as const) if (typeof q[k] === 'string') chosen[k] = q[k];
      return fragment(reply, printOptionsPart(`${devUrl(uuid)}/print-options`, capability, chosen));
    },
  );

  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/rename', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const form = formOf(req);
    const name = (form.name ?? '').trim();
    if (!name || name.length > 100) throw new ApiError('INVALID_PARAMETER', 'the name must be 1-100 characters');
    const remark = form.remark ?? '';
    if (remark.length > 500) throw new ApiError('INVALID_PARAMETER', 'the remark must be at most 500 characters');
    await s.devices.edit(sess(req).appId, { uuid, name, remark });
    return reply.redirect(`${devUrl(uuid)}?msg=renamed`, 303);
  });

  app.post<{ Params: { uuid: string } }>('/console/devices/:uuid/scan', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    let scanUuid: string | undefined;
    try {
      const callbackUrl = (formOf(req).callback_url ?? '').trim();
      const continuous = formOf(req).continuous === '1';
      const options = {
        ...(callbackUrl ? { callback_url: callbackUrl } : {}),
        ...(continuous ? { continuous: true, continuous_wait: 0 } : {}),
      };
      scanUuid = (
        await s.scan.create(sess(req).appId, { client_uuid: uuid, ...(Object.keys(options).length ? { options } : {}) })
      ).uuid;
    } catch (e) {
      // A scan already running on the box: show that one.
      if (!isApiError(e) || e.key !== 'SCAN_EXISTS' || typeof e.data?.exist_uuid !== 'string') throw e;
      scanUuid = e.data.exist_uuid;
    }
    return reply.redirect(`${devUrl(uuid)}/scans/${enc(scanUuid!)}`, 303);
  });

  // The scan page shows one page of 20 items (?page=N, as item_data pages them); its live part
  // polls that page.
  const scanPart = async (req: FastifyRequest, uuid: string, scanUuid: string, page: number) => {
    const appId = sess(req).appId;
    const info = await s.scan.info(appId, uuid, scanUuid);
    const items = await s.scan.itemData(appId, { client_uuid: uuid, scan_uuid: scanUuid, page });
    const pageUrl = `${devUrl(uuid)}/scans/${enc(scanUuid)}`;
    return scanLive(`${pageUrl}/live`, pageUrl, info, items, historyView(await s.history.read(appId, scanUuid)));
  };
  type ScanRoute = { Params: { uuid: string; scan: string }; Querystring: { page?: string } };
  app.get<ScanRoute>('/console/devices/:uuid/scans/:scan', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const scanUuid = idParam(req.params.scan);
    const client = await s.devices.info(sess(req).appId, uuid);
    return show(
      reply,
      req,
      'Scan task',
      scanTaskView(client, scanUuid, await scanPart(req, uuid, scanUuid, pageNumber(req.query.page)), sess(req).csrf),
    );
  });
  app.post<{ Params: { uuid: string; scan: string } }>(
    '/console/devices/:uuid/scans/:scan/stop',
    async (req, reply) => {
      const uuid = idParam(req.params.uuid);
      const scanUuid = idParam(req.params.scan);
      if (!confirmed(req))
        return askFirst(reply, req, dangers.stopScan(await s.devices.info(sess(req).appId, uuid), scanUuid));
      // This page's task only: a stale page must not stop a newer scan of the box.
      if (!(await s.scan.stop(sess(req).appId, uuid, scanUuid))) {
        throw new Refused(
          409,
          'this scan task is not running any more, so nothing was stopped (a newer scan of the box is stopped from its own page)',
        );
      }
      return reply.redirect(`${devUrl(uuid)}/scans/${enc(scanUuid)}`, 303);
    },
  );
  app.get<ScanRoute>('/console/devices/:uuid/scans/:scan/live', async (req, reply) =>
    fragment(
      reply,
      await scanPart(req, idParam(req.params.uuid), idParam(req.params.scan), pageNumber(req.query.page)),
    ),
  );

  app.post<{ Params: { uuid: string } }>(PRINT_ROUTE, async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const { appId, csrf } = sess(req);
    if (!req.isMultipart()) throw new ApiError('INVALID_PARAMETER', 'send the form as multipart/form-data');
    let file: Buffer | undefined;
    let checked = false;
    // A large form waits for a work slot before its file is read, as the API's inline bodies
    // do (print/inline-body.ts), and hands the file to the service as it is (no Base64 copy).
    // The slot goes back once the file is stored, or at the latest with the answer.
    const hold = new HeldBody();
    reply.raw.once('close', () => hold.release());
    const chosen: PrintChoice = {};
    for await (const part of req.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === '_csrf') checked = sameToken(String(part.value), csrf);
        else if ((PRINT_FIELDS as readonly string[]).includes(part.fieldname)) {
          if (part.valueTruncated) throw new ApiError('INVALID_PARAMETER', `the field ${part.fieldname} is too long`);
          chosen[part.fieldname] = String(part.value);
        }
        continue;
      }
      // The token must come before the file: nothing is read from a request that lacks it.
      if (!checked) throw new Refused(403, CSRF_REFUSED);
      if (Number(req.headers['content-length']) >= LARGE_BODY_BYTES && !hold.lease) {
        hold.lease = await s.work.acquire('reading the form', {
          maxWaitMs: Math.min(s.work.s.maxWaitMs, BODY_WAIT_MS),
        });
      }
      file = await part.toBuffer();
    }
    if (!checked) throw new Refused(403, CSRF_REFUSED);
    let created: string;
    try {
      if (!file || file.length === 0) throw new ApiError('INVALID_PARAMETER', 'choose a PDF or JPG file to print');
      const options = printOptionsOf(chosen);
      // The API's own schema and the API's own service: the same checks and messages as POST /api/print/create.
      const body = checkBody(api.PrintCreateBody, {
        client_uuid: uuid,
        file_type: fileTypeOf(file),
        file_content: INLINE_PLACEHOLDER,
        ...(Object.keys(options).length ? { options } : {}),
      });
      hold.holdFile(file);
      file = undefined;
      created = (await s.print.create(appId, body, hold)).uuid!;
    } catch (e) {
      if (shownOnPage(e)) return devicePage(req, reply, uuid, { error: e, chosen });
      throw e;
    }
    return reply.redirect(`${devUrl(uuid)}/prints/${enc(created)}`, 303);
  });

  const printPart = async (req: FastifyRequest, uuid: string, printUuid: string) =>
    printLive(
      `${devUrl(uuid)}/prints/${enc(printUuid)}/live`,
      await s.print.info(sess(req).appId, { client_uuid: uuid, print_uuid: printUuid }),
      historyView(await s.history.read(sess(req).appId, printUuid)),
    );
  app.get<{ Params: { uuid: string; print: string } }>('/console/devices/:uuid/prints/:print', async (req, reply) => {
    const uuid = idParam(req.params.uuid);
    const printUuid = idParam(req.params.print);
    const client = await s.devices.info(sess(req).appId, uuid);
    const job = await s.print.job(sess(req).appId, { client_uuid: uuid, print_uuid: printUuid });
    return show(
      reply,
      req,
      'Print task',
      printTaskView(client, printUuid, await printPart(req, uuid, printUuid), printJobView(job)),
    );
  });
  app.get<{ Params: { uuid: string; print: string } }>(
    '/console/devices/:uuid/prints/:print/live',
    async (req, reply: FastifyReply) =>
      fragment(reply, await printPart(req, idParam(req.params.uuid), idParam(req.params.print))),
  );
}
