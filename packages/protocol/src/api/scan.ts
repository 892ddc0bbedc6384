// Scanning endpoints (docs/api.md: "Scanning", "Scan task", "Scan item", "Limits"). Bounds are
// the API's; the scanner's own limits (its resolutions, duplex) are checked by the service.
import Type, { type Static } from 'typebox';
import { CallbackUrl } from './callbacks.ts';
import { Envelope, Id } from './envelope.ts';
import { MAX_URL_CHARS } from '../url-length.ts';

/** docs/api.md, "Limits": options.resolution. */
export const SCAN_RESOLUTIONS = [100, 150, 200, 240, 300, 400, 600, 1200] as const;

/** The defaults of scan create's options (docs/api.md, "POST /api/scan/create"). */
export const SCAN_DEFAULTS = {
  continuous: false,
  continuous_wait: 60,
  blank_page_skip: true,
  duplex: true,
  color_type: 0,
  quality: 90,
  resolution: 200,
  encrypt: false,
  direct_mode: 0,
  direct_page_size: 2,
} as const;

/** boxhub's item rule (docs/scanning.md, "Items as the stack scans"): the defaults of the
 *  extension options item_pages and item_seconds. */
export const SCAN_ITEM_DEFAULTS = { item_pages: 20, item_seconds: 3 } as const;

export const ScanOptions = Type.Object(
  {
    callback_url: Type.Optional(CallbackUrl),
    continuous: Type.Optional(Type.Boolean({ description: 'continuous scan mode (default false)' })),
    continuous_wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 86400,
        description: 'seconds to wait for more paper in continuous mode (default 60); 0 waits until stop',
      }),
    ),
    blank_page_skip: Type.Optional(Type.Boolean({ description: 'skip blank pages (default true)' })),
    duplex: Type.Optional(
      Type.Boolean({
        description: 'double-sided (default true; a simplex scanner scans one side when this is not given)',
      }),
    ),
    color_type: Type.Optional(
      Type.Union([Type.Literal(0), Type.Literal(1)], { description: '0 colour (default), 1 black and white' }),
    ),
    quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'JPEG quality 1-100 (default 90)' })),
    resolution: Type.Optional(
      Type.Union(
        SCAN_RESOLUTIONS.map((r) => Type.Literal(r)),
        { description: 'dpi: 100, 150, 200 (default), 240, 300, 400, 600, 1200, limited to what the scanner has' },
      ),
    ),
    encrypt: Type.Optional(Type.Boolean({ description: 'end-to-end encryption (default false)' })),
    direct_mode: Type.Optional(
      Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)], {
        description: '0 off (default), 1 direct transfer only, 2 direct transfer and PDF items',
      }),
    ),
    direct_page_size: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: 'pages per direct transfer, 1-10 (default 2)' }),
    ),
    direct_addr: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_URL_CHARS,
        description:
          'direct-transfer address (http or https, at most 200 characters: Unicode code points); required when direct_mode > 0',
      }),
    ),
    item_pages: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 200,
        description:
          'boxhub extension: an item is closed at the end of a sheet once it holds this many pages (1-200, default 20; docs/scanning.md)',
      }),
    ),
    item_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 3600,
        description:
          'boxhub extension: an item is closed at the end of a sheet once its first page is this many seconds old (0-3600, default 3; 0: pages only)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ScanOptions = Static<typeof ScanOptions>;

export const ScanCreateBody = Type.Object(
  { client_uuid: Id('device UUID'), options: Type.Optional(ScanOptions) },
  { additionalProperties: false },
);
export type ScanCreateBody = Static<typeof ScanCreateBody>;
export const ScanCreateResult = Type.Object({
  uuid: Type.Optional(Type.String({ description: 'scan task UUID; save it at once, scan callbacks carry it' })),
  expires_at: Type.Optional(Type.Integer({ description: 'Unix seconds' })),
  exist_uuid: Type.Optional(
    Type.String({ description: 'with code 30204: the scan task already active on the device' }),
  ),
  direct_secret: Type.Optional(
    Type.String({
      description: 'with direct_mode > 0: the whsec_ secret that signs the direct transfers of this task',
    }),
  ),
});
export type ScanCreateResult = Static<typeof ScanCreateResult>;
export const ScanCreateResponse = Envelope(ScanCreateResult);

export const ScanDeviceBody = Type.Object({ client_uuid: Id('device UUID') }, { additionalProperties: false });
export type ScanDeviceBody = Static<typeof ScanDeviceBody>;

export const ScanCurrent = Type.Object({
  exist: Type.Boolean({ description: 'whether a scan task is in progress on the device' }),
  scan_uuid: Type.Optional(Type.String()),
});
export type ScanCurrent = Static<typeof ScanCurrent>;
export const ScanCurrentResponse = Envelope(ScanCurrent);

export const ScanInfoBody = Type.Object(
  { client_uuid: Id('device UUID'), scan_uuid: Id('scan task UUID') },
  { additionalProperties: false },
);
export type ScanInfoBody = Static<typeof ScanInfoBody>;
export const ScanInfo = Type.Object({
  action_ack: Type.Boolean(),
  action_ack_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  finished: Type.Boolean(),
  item_size: Type.Integer({ description: 'scan items so far' }),
  total_pages: Type.Integer(),
  total_file_size: Type.Optional(Type.Integer({ description: 'KB; absent with direct_mode 1' })),
  error_code: Type.Integer({ description: 'scan error code, docs/errors.md' }),
  created_at: Type.Integer({ description: 'Unix ms' }),
  finished_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
  scanned_pages: Type.Optional(
    Type.Integer({
      description:
        'boxhub extension: sides scanned and kept so far, the item being assembled included (total_pages counts those in recorded items)',
    }),
  ),
  skipped_pages: Type.Optional(Type.Integer({ description: 'boxhub extension: blank sides skipped so far' })),
  last_page_at: Type.Optional(
    Type.Integer({ description: 'boxhub extension: Unix ms when the box reported its last side (box clock)' }),
  ),
});
export type ScanInfo = Static<typeof ScanInfo>;
export const ScanInfoResponse = Envelope(ScanInfo);

export const ItemDataBody = Type.Object(
  {
    client_uuid: Id('device UUID'),
    scan_uuid: Id('scan task UUID'),
    page: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: 'page number 1-1000 (default 1); 20 items per page' }),
    ),
  },
  { additionalProperties: false },
);
export type ItemDataBody = Static<typeof ItemDataBody>;
export const ScanItem = Type.Object({
  item_id: Type.Integer(),
  pages: Type.Integer({ description: 'PDF pages (scanned sides)' }),
  file_size: Type.Optional(Type.Integer({ description: 'KB; absent with direct_mode 1' })),
  upload_spent: Type.Optional(Type.Integer({ description: 'seconds; absent with direct_mode 1' })),
  check_sum: Type.Optional(
    Type.String({ description: 'MD5 of the file (of the encrypted file when encrypted); absent with direct_mode 1' }),
  ),
  scanned_at: Type.Integer({ description: 'Unix ms' }),
  cipher: Type.Optional(Type.String({ description: 'hex; with encryption only (docs/encryption.md)' })),
  cipher_kid: Type.Optional(
    Type.String({ description: 'boxhub extension: kid of the application key the item is encrypted to' }),
  ),
  temp_download_url: Type.Optional(Type.String({ description: 'valid 1 hour; absent with direct_mode 1' })),
});
export type ScanItem = Static<typeof ScanItem>;
export const ItemData = Type.Object({
  scan_uuid: Type.String(),
  total: Type.Integer(),
  page_size: Type.Integer(),
  page: Type.Integer(),
  items: Type.Array(ScanItem),
});
export type ItemData = Static<typeof ItemData>;
export const ItemDataResponse = Envelope(ItemData);
