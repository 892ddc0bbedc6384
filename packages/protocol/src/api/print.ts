// Printing endpoints (docs/api.md: "Printing", "Print task", "Printer capability", "Limits").
import Type, { type Static } from 'typebox';
import { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from '../constants.ts';
import { PrinterCapability } from '../capability.ts';
import { CallbackUrl } from './callbacks.ts';
import { Envelope, Id } from './envelope.ts';
import { MAX_URL_CHARS } from '../url-length.ts';

export const CapabilityQuery = Type.Object({ client_uuid: Id('device UUID') }, { additionalProperties: false });
export const CapabilityResponse = Envelope(PrinterCapability);

const Md5Hex = Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'MD5 of the file, 32 hex digits' });

export const PrintOptions = Type.Object(
  {
    callback_url: Type.Optional(CallbackUrl),
    direct: Type.Optional(
      Type.Boolean({
        description: 'the box fetches file_url itself; the server neither fetches nor stores the file (default false)',
      }),
    ),
    strict: Type.Optional(
      Type.Boolean({ description: "report the printer's own count of printed sides (default false)" }),
    ),
    encrypt: Type.Optional(
      Type.Boolean({ description: 'the file is end-to-end encrypted to the box (default false)' }),
    ),
    cipher: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'hex cipher of the file key; required with encrypt' }),
    ),
    media_size: Type.Optional(Type.Enum(MediaSize, { description: 'default SVC_MS_A4' })),
    media_type: Type.Optional(Type.Enum(MediaType, { description: 'default SVC_MT_PLAIN' })),
    color_mode: Type.Optional(Type.Enum(ColorMode)),
    borderless: Type.Optional(Type.Boolean({ description: 'default false' })),
    quality: Type.Optional(Type.Enum(Quality)),
    duplex: Type.Optional(Type.Enum(Duplex)),
    input_slot: Type.Optional(Type.Enum(InputSlot)),
    number: Type.Optional(Type.Integer({ minimum: 1, maximum: 999, description: 'copies, 1-999 (default 1)' })),
    page_ranges: Type.Optional(Type.String({ maxLength: 1000, description: 'e.g. 1,3,5 or 1-10 or 1-3,5,6-10' })),
    reverse: Type.Optional(Type.Boolean({ description: 'print in reverse order (default true)' })),
    collate: Type.Optional(Type.Boolean({ description: 'collate copies (default true)' })),
  },
  { additionalProperties: false },
);
export type PrintOptions = Static<typeof PrintOptions>;

export const PrintCreateBody = Type.Object(
  {
    client_uuid: Id('device UUID'),
    file_type: Type.Union([Type.Literal('pdf'), Type.Literal('jpg')], { description: 'pdf or jpg' }),
    file_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_URL_CHARS,
        description:
          'http(s) URL of the file, at most 200 characters (Unicode code points); exactly one of file_url and file_content',
      }),
    ),
    file_content: Type.Optional(Type.String({ minLength: 1, description: 'the file, Base64' })),
    file_check_sum: Type.Optional(
      Type.Union([Md5Hex, Type.Literal('')], {
        description: 'MD5 of the file (of the encrypted file when encrypted); verified when given',
      }),
    ),
    options: Type.Optional(PrintOptions),
  },
  { additionalProperties: false },
);
export type PrintCreateBody = Static<typeof PrintCreateBody>;
export const PrintCreateResult = Type.Object({
  uuid: Type.Optional(Type.String({ description: 'print task UUID; save it at once, print callbacks carry it' })),
  expires_at: Type.Optional(Type.Integer({ description: 'Unix seconds' })),
});
export type PrintCreateResult = Static<typeof PrintCreateResult>;
export const PrintCreateResponse = Envelope(PrintCreateResult);

export const PrintDeviceBody = Type.Object({ client_uuid: Id('device UUID') }, { additionalProperties: false });
export const PrintInfoBody = Type.Object(
  { client_uuid: Id('device UUID'), print_uuid: Id('print task UUID') },
  { additionalProperties: false },
);
export type PrintInfoBody = Static<typeof PrintInfoBody>;

export const PrintInfo = Type.Object({
  action_ack: Type.Boolean(),
  action_ack_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  started: Type.Boolean(),
  started_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  finished: Type.Boolean(),
  finished_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  file_size: Type.Optional(Type.Integer({ description: 'KB' })),
  download_spent: Type.Optional(Type.Integer({ description: 'seconds the box took to download the file' })),
  error_code: Type.Integer({ description: 'print error code, docs/errors.md' }),
  created_at: Type.Integer({ description: 'Unix ms' }),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
  pages: Type.Optional(
    Type.Integer({ description: 'estimated sides (selected pages × copies), once printing has started' }),
  ),
  printed_pages: Type.Optional(
    Type.Integer({ description: 'sides the printer reports printed, strict mode, once ended' }),
  ),
});
export type PrintInfo = Static<typeof PrintInfo>;
export const PrintInfoResponse = Envelope(PrintInfo);
