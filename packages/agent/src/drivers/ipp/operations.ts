// The IPP operations the box needs (RFC 8011 §4.2–§4.3, PWG 5100.13 §4.1 Identify-Printer),
// each a thin typed function over IppClient. A status-code >= 0x0400 throws IppStatusError.
import type { IppClient, RequestOptions } from './client.ts';
import { IppStatusError } from './errors.ts';
import type { IppAttribute, IppMessage } from './model.ts';
import {
  collection,
  enumAttr,
  integer,
  IppAttributes,
  keyword,
  mimeMediaType,
  nameAttr,
  rangeOfInteger,
  textAttr,
  boolean,
} from './attributes.ts';
import { JobState, PrintQuality, type JobStateName, type OperationName } from './tags.ts';

/** media-col (PWG 5100.7 §6.3): size in hundredths of mm, margins likewise. */
export interface MediaCol {
  size?: { x: number; y: number };
  source?: string;
  type?: string;
  /** All four margins; 0 everywhere is borderless (PWG 5100.13 §6.2.4). */
  margins?: { top: number; bottom: number; left: number; right: number };
}

/** Job Template attributes the box sets (RFC 8011 §5.2, PWG 5100.13). */
export interface JobTemplate {
  copies?: number;
  sides?: 'one-sided' | 'two-sided-long-edge' | 'two-sided-short-edge';
  printColorMode?: string;
  printQuality?: keyof typeof PrintQuality;
  /** Send either `media` (a PWG media name) or `mediaCol`, not both (PWG 5100.7 §6.3). */
  media?: string;
  mediaCol?: MediaCol;
  pageRanges?: Array<{ lower: number; upper: number }>;
  multipleDocumentHandling?: 'separate-documents-collated-copies' | 'separate-documents-uncollated-copies';
  pageDelivery?: string;
  /** PWG 5100.13 §6.2.8: how an image is scaled onto the media (fit, fill, ...). */
  printScaling?: string;
}

export interface JobInfo {
  id: number;
  uri?: string;
  name?: string;
  state: JobStateName | 'unknown';
  stateReasons: string[];
  stateMessage?: string;
  impressions?: number;
  impressionsCompleted?: number;
  mediaSheetsCompleted?: number;
}

export const JOB_ATTRIBUTES = [
  'job-id',
  'job-uri',
  'job-name',
  'job-state',
  'job-state-reasons',
  'job-state-message',
  'job-impressions',
  'job-impressions-completed',
  'job-media-sheets-completed',
] as const;

function check(op: OperationName, res: IppMessage): IppMessage {
  if (res.code >= 0x0400)
    throw new IppStatusError(res.code, op, IppAttributes.of(res, 'operation').string('status-message'));
  return res;
}

export function jobTemplateAttributes(t: JobTemplate): IppAttribute[] {
  if (t.media !== undefined && t.mediaCol !== undefined)
    throw new TypeError('send media or media-col, not both (PWG 5100.7 §6.3)');
  const out: IppAttribute[] = [];
  if (t.copies !== undefined) out.push(integer('copies', t.copies));
  if (t.sides) out.push(keyword('sides', t.sides));
  if (t.printColorMode) out.push(keyword('print-color-mode', t.printColorMode));
  // print-quality is an enum, not a keyword (PWG 5100.13 §5.6.19); a keyword is rejected.
  if (t.printQuality) out.push(enumAttr('print-quality', PrintQuality[t.printQuality]));
  if (t.media) out.push(keyword('media', t.media));
  if (t.mediaCol) {
    const m = t.mediaCol;
    const members: IppAttribute[] = [];
    if (m.size)
      members.push(collection('media-size', [integer('x-dimension', m.size.x), integer('y-dimension', m.size.y)]));
    if (m.margins) {
      members.push(
        integer('media-top-margin', m.margins.top),
        integer('media-bottom-margin', m.margins.bottom),
        integer('media-left-margin', m.margins.left),
        integer('media-right-margin', m.margins.right),
      );
    }
    if (m.source) members.push(keyword('media-source', m.source));
    if (m.type) members.push(keyword('media-type', m.type));
    out.push(collection('media-col', members));
  }
  if (t.pageRanges?.length) out.push(rangeOfInteger('page-ranges', ...t.pageRanges));
  if (t.multipleDocumentHandling) out.push(keyword('multiple-document-handling', t.multipleDocumentHandling));
  if (t.pageDelivery) out.push(keyword('page-delivery', t.pageDelivery));
  if (t.printScaling) out.push(keyword('print-scaling', t.printScaling));
  return out;
}

export function jobInfo(a: IppAttributes): JobInfo {
  const state = a.integer('job-state');
  const info: JobInfo = {
    id: a.integer('job-id') ?? 0,
    state: (state !== undefined && JobState[state as keyof typeof JobState]) || 'unknown',
    stateReasons: a.strings('job-state-reasons'),
  };
  const uri = a.string('job-uri');
  if (uri !== undefined) info.uri = uri;
  const name = a.string('job-name');
  if (name !== undefined) info.name = name;
  const msg = a.string('job-state-message');
  if (msg !== undefined) info.stateMessage = msg;
  const imp = a.integer('job-impressions');
  if (imp !== undefined) info.impressions = imp;
  const done = a.integer('job-impressions-completed');
  if (done !== undefined) info.impressionsCompleted = done;
  const sheets = a.integer('job-media-sheets-completed');
  if (sheets !== undefined) info.mediaSheetsCompleted = sheets;
  return info;
}

export const TERMINAL_JOB_STATES: ReadonlySet<string> = new Set(['canceled', 'aborted', 'completed']);

/** RFC 8011 §4.2.5. `all` plus `media-col-database`, which `all` does not include (PWG 5100.7 §6.6). */
export async function getPrinterAttributes(
  client: IppClient,
  o: { requested?: string[]; documentFormat?: string } & RequestOptions = {},
): Promise<IppAttributes> {
  const op: IppAttribute[] = [keyword('requested-attributes', ...(o.requested ?? ['all', 'media-col-database']))];
  if (o.documentFormat) op.push(mimeMediaType('document-format', o.documentFormat));
  return IppAttributes.of(
    check('Get-Printer-Attributes', await client.request('Get-Printer-Attributes', { operation: op }, o)),
    'printer',
  );
}

export interface JobRequest {
  documentFormat: string;
  jobName?: string;
  userName?: string;
  template?: JobTemplate;
}

function jobOperationAttributes(j: JobRequest): IppAttribute[] {
  return [
    nameAttr('requesting-user-name', j.userName ?? 'boxhub'),
    nameAttr('job-name', j.jobName ?? 'boxhub'),
    mimeMediaType('document-format', j.documentFormat),
  ];
}

/** RFC 8011 §4.2.3: checks the job without creating it. Returns attributes the printer rejected. */
export async function validateJob(
  client: IppClient,
  j: JobRequest,
  ro: RequestOptions = {},
): Promise<{ unsupported: IppAttributes }> {
  const res = check(
    'Validate-Job',
    await client.request(
      'Validate-Job',
      {
        operation: jobOperationAttributes(j),
        groups: [{ tag: 'job', attributes: jobTemplateAttributes(j.template ?? {}) }],
      },
      ro,
    ),
  );
  return { unsupported: IppAttributes.of(res, 'unsupported') };
}

/** RFC 8011 §4.2.1: sends the document in the same request. */
export async function printJob(
  client: IppClient,
  j: JobRequest & { document: Uint8Array },
  ro: RequestOptions = {},
): Promise<JobInfo> {
  const res = check(
    'Print-Job',
    await client.request(
      'Print-Job',
      {
        operation: jobOperationAttributes(j),
        groups: [{ tag: 'job', attributes: jobTemplateAttributes(j.template ?? {}) }],
        data: j.document,
      },
      { timeoutMs: 60_000, ...ro },
    ),
  );
  return jobInfo(IppAttributes.of(res, 'job'));
}

/** RFC 8011 §4.3.4. */
export async function getJobAttributes(
  client: IppClient,
  jobId: number,
  o: { requested?: string[] } & RequestOptions = {},
): Promise<JobInfo & { attributes: IppAttributes }> {
  const res = check(
    'Get-Job-Attributes',
    await client.request(
      'Get-Job-Attributes',
      {
        operation: [
          integer('job-id', jobId),
          nameAttr('requesting-user-name', 'boxhub'),
          keyword('requested-attributes', ...(o.requested ?? JOB_ATTRIBUTES)),
        ],
      },
      o,
    ),
  );
  const a = IppAttributes.of(res, 'job');
  return { ...jobInfo(a), attributes: a };
}

/** RFC 8011 §4.2.6; which-jobs per §4.2.6.1 (PWG 5100.7 adds `all`, `aborted`…). */
export async function getJobs(
  client: IppClient,
  o: { whichJobs?: string; myJobs?: boolean; limit?: number } & RequestOptions = {},
): Promise<JobInfo[]> {
  const op: IppAttribute[] = [
    nameAttr('requesting-user-name', 'boxhub'),
    keyword('which-jobs', o.whichJobs ?? 'not-completed'),
    keyword('requested-attributes', ...JOB_ATTRIBUTES),
  ];
  if (o.myJobs !== undefined) op.push(boolean('my-jobs', o.myJobs));
  if (o.limit !== undefined) op.push(integer('limit', o.limit));
  const res = check('Get-Jobs', await client.request('Get-Jobs', { operation: op }, o));
  return IppAttributes.each(res, 'job').map(jobInfo);
}

/** RFC 8011 §4.3.3. */
export async function cancelJob(client: IppClient, jobId: number, ro: RequestOptions = {}): Promise<void> {
  check(
    'Cancel-Job',
    await client.request(
      'Cancel-Job',
      {
        operation: [integer('job-id', jobId), nameAttr('requesting-user-name', 'boxhub')],
      },
      ro,
    ),
  );
}

/** PWG 5100.13 §4.1.2: makes the printer beep / flash / show a message. */
export async function identifyPrinter(
  client: IppClient,
  o: { actions?: Array<'display' | 'flash' | 'sound' | 'speak'>; message?: string } & RequestOptions = {},
): Promise<void> {
  const op: IppAttribute[] = [nameAttr('requesting-user-name', 'boxhub')];
  if (o.actions?.length) op.push(keyword('identify-actions', ...o.actions));
  if (o.message) op.push(textAttr('message', o.message));
  check('Identify-Printer', await client.request('Identify-Printer', { operation: op }, o));
}

/** Polls Get-Job-Attributes until a terminal job state (RFC 8011 §5.3.7), or the signal aborts. */
export async function waitForJob(
  client: IppClient,
  jobId: number,
  o: { intervalMs?: number; signal?: AbortSignal; onUpdate?: (j: JobInfo) => void } = {},
): Promise<JobInfo> {
  for (;;) {
    const j = await getJobAttributes(client, jobId, o.signal ? { signal: o.signal } : {});
    o.onUpdate?.(j);
    if (TERMINAL_JOB_STATES.has(j.state)) return j;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, o.intervalMs ?? 250);
      o.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          reject(o.signal?.reason);
        },
        { once: true },
      );
    });
  }
}
