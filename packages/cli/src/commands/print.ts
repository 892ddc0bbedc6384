// `boxhub print FILE --device DEVICE [options]`: prints a PDF or JPEG on a box and follows it
// through the queue and the printer to its end and the printed page count.
import { readFile } from 'node:fs/promises';
import type { PrintInfo } from '@boxhub/sdk';
import { common, defineCommand, intFlag } from '../command.ts';
import { connect, connectionFlags, deviceUuid } from '../connection.ts';
import { errnoCode, EXIT, Failed, messageOf, UsageError } from '../exit.ts';
import { emit, Interrupt, Progress } from '../progress.ts';

export const command = defineCommand({
  summary: 'print a PDF or JPEG on a box',
  usage: 'FILE --device DEVICE [options]',
  description:
    "Sends FILE to the box and follows the print task through the box's queue and the printer to\nits end. Ctrl-C (or --timeout) stops following, not the print: cancel it in the console or\nwith POST /api/print/cancel (which cancels every unfinished print of the box).",
  args: { name: 'FILE', min: 1, max: 1 },
  flags: {
    device: common.device,
    copies: { type: 'string', arg: 'N', help: '1-999 (default 1)' },
    duplex: { type: 'boolean', help: 'two-sided, long edge (SVC_DP_NOTUMBLE)' },
    'duplex-short': { type: 'boolean', help: 'two-sided, short edge (SVC_DP_TUMBLE)' },
    pages: { type: 'string', arg: 'RANGES', help: 'e.g. 1-3,5 (default: all)' },
    media: { type: 'string', arg: 'SIZE', help: 'e.g. SVC_MS_A4 (default), SVC_MS_LETTER' },
    gray: { type: 'boolean', help: 'black and white' },
    strict: { type: 'boolean', help: "report the printer's own count of printed sides" },
    'no-reverse': { type: 'boolean', help: 'print in page order (the default reverses, for face-up trays)' },
    encrypt: {
      type: 'boolean',
      help: "encrypt the file to the box's key first: the service never sees it\n(docs/encryption.md); the box's key id is shown to compare with the box",
    },
    timeout: {
      ...common.timeout,
      help: 'stop following after SEC seconds, exit 1; the print goes on\n(default: follow it to the end)',
    },
    ...connectionFlags,
    json: common.json,
  },
  json: '{print_uuid, client_uuid, finished, error_code, pages, printed_pages, …the print/info answer, interrupted, timed_out}',
  examples: [
    'boxhub print worksheet.pdf --device BX0042',
    'boxhub print worksheet.pdf --device BX0042 --copies 30 --duplex --pages 1-2 --strict',
    'boxhub print photo.jpg --device BX0042 --json | jq .printed_pages',
  ],
  async run(ctx) {
    const values = ctx.values;
    const file = ctx.args[0]!;
    const copies = intFlag('copies', values.copies, 1, 999);
    if (values.duplex && values['duplex-short']) throw new UsageError('--duplex and --duplex-short are exclusive');
    const timeout = intFlag('timeout', values.timeout, 1, 7 * 86400);
    let plain: Buffer;
    try {
      plain = await readFile(file);
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${errnoCode(e) === 'ENOENT' ? 'no such file' : messageOf(e)}`);
    }
    const boxhub = await connect(ctx);
    const progress = new Progress({ json: ctx.json });
    let interrupt: Interrupt | undefined;
    try {
      const client_uuid = await deviceUuid(boxhub, values.device);
      const options = {
        ...(copies !== undefined ? { number: copies } : {}),
        ...(values.duplex
          ? { duplex: 'SVC_DP_NOTUMBLE' as const }
          : values['duplex-short']
            ? { duplex: 'SVC_DP_TUMBLE' as const }
            : {}),
        ...(values.pages ? { page_ranges: values.pages } : {}),
        ...(values.media ? { media_size: values.media as 'SVC_MS_A4' } : {}),
        ...(values.gray ? { color_mode: 'SVC_CM_MONO' as const } : {}),
        ...(values.strict ? { strict: true } : {}),
        ...(values['no-reverse'] ? { reverse: false } : {}),
      };
      progress.status(`sending ${file}…`);
      let created;
      if (values.encrypt) {
        // Encrypted here to the box's own key; the file type is read from the plaintext.
        const { client } = await boxhub.devices.info({ uuid: client_uuid });
        if (!client?.e2e_public_key)
          throw new Failed(
            'this box has not reported an encryption key (an agent without end-to-end encryption)',
            30311,
          );
        const { encryptForBox } = await import('@boxhub/sdk');
        const enc = await encryptForBox({ file: plain, boxPublicKey: client.e2e_public_key, clientUuid: client_uuid });
        progress.line(`encrypted to the box's key ${client.e2e_kid}`);
        created = await boxhub.print.create({
          client_uuid,
          file_type: plain[0] === 0xff && plain[1] === 0xd8 ? 'jpg' : 'pdf',
          file_content: enc.file.toString('base64'),
          file_check_sum: enc.checkSum,
          options: { ...options, encrypt: true, cipher: enc.cipher },
        });
      } else {
        created = await boxhub.print.file(client_uuid, plain, { options });
      }
      const print_uuid = created.uuid;
      if (!print_uuid) throw new Failed('the service created the print task but gave no uuid');
      progress.line(`print ${print_uuid} sent to ${client_uuid}`);
      // Ctrl-C ends the wait (the signal), not the print.
      const stopWaiting = new AbortController();
      interrupt = new Interrupt(() => stopWaiting.abort());
      let info: PrintInfo | undefined;
      let timedOut = false;
      try {
        info = await boxhub.print.waitForFinish(
          { client_uuid, print_uuid },
          {
            intervalMs: 500,
            signal: stopWaiting.signal,
            ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
            onProgress: (i) => {
              info = i;
              progress.update(
                i.finished
                  ? 'finished'
                  : i.started
                    ? `printing ${i.pages ?? '?'} side${i.pages === 1 ? '' : 's'}…`
                    : i.action_ack
                      ? 'queued on the box…'
                      : 'sending to the box…',
              );
            },
          },
        );
      } catch (e) {
        if (e instanceof Error && e.name === 'WaitTimeoutError') timedOut = true;
        else if (!interrupt.interrupted) throw e;
      }
      progress.done();
      const result = { print_uuid, client_uuid, ...info, interrupted: interrupt.interrupted, timed_out: timedOut };
      const error_code = info?.error_code ?? 0;
      const sides = (n: number | undefined) => `${n ?? '?'} side${n === 1 ? '' : 's'}`;
      emit(
        ctx.json,
        result,
        interrupt.interrupted || timedOut
          ? `${timedOut ? `not finished after ${timeout} s` : 'stopped following'}: print ${print_uuid} goes on (${info?.started ? `printing ${sides(info.pages)}` : 'not printing yet'})`
          : error_code === 0
            ? `printed: ${sides(info?.pages)}${info?.printed_pages !== undefined ? ` (the printer counted ${info.printed_pages})` : ''}`
            : `ended with print error ${error_code} (docs/errors.md)${info?.printed_pages !== undefined ? ` after ${info.printed_pages} printed sides` : ''}`,
      );
      if (interrupt.interrupted) return EXIT.interrupted;
      return error_code === 0 && !timedOut ? EXIT.ok : EXIT.failed;
    } finally {
      interrupt?.dispose();
      progress.done();
    }
  },
});
