// Device management endpoints (docs/api.md, "Devices", "Device (client)").
import Type, { type Static } from 'typebox';
import { ConnectionType, NetworkType } from '../constants.ts';
import { STATE_REASON_NAMES } from '../device-state.ts';
import { Envelope, Id, NullEnvelope } from './envelope.ts';

const Conn = Type.Enum(ConnectionType);
/** boxhub extension (docs/printers-and-scanners.md, "Normalised state reasons"). */
const DeviceState = {
  state: Type.Optional(
    Type.Union([Type.Literal('idle'), Type.Literal('processing'), Type.Literal('stopped')], {
      description: 'boxhub extension: idle, processing or stopped, as the device says',
    }),
  ),
  state_reasons: Type.Optional(
    Type.Array(Type.Enum(STATE_REASON_NAMES), {
      description:
        'boxhub extension: normalised state reasons (docs/printers-and-scanners.md, "Normalised state reasons"); [] when nothing is wrong',
    }),
  ),
  device_reasons: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "boxhub extension: the device's own words the reasons were read from (IPP printer-state-reasons, SANE status, eSCL states)",
    }),
  ),
};

export const ClientPrinter = Type.Object({
  connected: Type.Optional(Type.Boolean()),
  supported: Type.Optional(Type.Boolean({ description: 'whether the printer model is supported' })),
  make: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  connection_type: Type.Optional(Conn),
  error_code: Type.Optional(Type.Integer({ description: 'printer error code, docs/errors.md' })),
  ...DeviceState,
});

export const ClientScanner = Type.Object({
  connected: Type.Optional(Type.Boolean()),
  supported: Type.Optional(Type.Boolean()),
  make: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  connection_type: Type.Optional(Conn),
  error_code: Type.Optional(
    Type.Integer({
      description:
        'boxhub extension: 0, or the scan error code of the fault the scanner is in (2001 jammed, 2002 cover open; docs/errors.md)',
    }),
  ),
  ...DeviceState,
});

/** The Device resource. All fields are optional in responses (docs/api.md, "Device (client)"). */
export const Client = Type.Object({
  uuid: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  remark: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  active_at: Type.Optional(Type.Integer({ description: 'bind time, Unix ms' })),
  online: Type.Optional(Type.Boolean()),
  last_connect_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  last_disconnect_at: Type.Optional(Type.Integer({ description: 'Unix ms' })),
  version: Type.Optional(Type.String()),
  firmware: Type.Optional(Type.String()),
  mac: Type.Optional(Type.String()),
  wlan_mac: Type.Optional(Type.String()),
  network_type: Type.Optional(Type.Enum(NetworkType)),
  local_ip: Type.Optional(Type.String()),
  gateway_ip: Type.Optional(Type.String()),
  printer: Type.Optional(ClientPrinter),
  scanner: Type.Optional(ClientScanner),
  e2e_public_key: Type.Optional(
    Type.String({
      description:
        "boxhub extension: the box's X25519 public key (hex) for end-to-end encrypted print files (docs/encryption.md)",
    }),
  ),
  e2e_kid: Type.Optional(
    Type.String({ description: 'boxhub extension: key id of e2e_public_key (first 8 bytes of its SHA-256, hex)' }),
  ),
});
export type Client = Static<typeof Client>;

const Name = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: 'custom device name, 1-100 characters',
});
const Remark = Type.String({ maxLength: 500, description: 'custom remark, at most 500 characters' });

export const GetUuidQuery = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64, description: 'device code from the label' }) },
  { additionalProperties: false },
);
export const GetUuidResponse = Envelope(Type.Object({ uuid: Type.Optional(Type.String()) }));

export const BindBody = Type.Object(
  { uuid: Id('device UUID'), name: Name, remark: Type.Optional(Remark) },
  { additionalProperties: false },
);
export type BindBody = Static<typeof BindBody>;
export const UnbindBody = Type.Object({ uuid: Id('device UUID') }, { additionalProperties: false });
export const EditBody = Type.Object(
  { uuid: Id('device UUID'), name: Name, remark: Type.Optional(Remark) },
  { additionalProperties: false },
);
export type EditBody = Static<typeof EditBody>;

export const InfoQuery = Type.Object({ uuid: Id('device UUID') }, { additionalProperties: false });
export const InfoResponse = Envelope(Type.Object({ client: Type.Optional(Client) }));

export const Page = Type.Integer({ minimum: 1, maximum: 1000, description: 'page number, 1-1000' });
export const ListQuery = Type.Object({ page: Page }, { additionalProperties: false });
export const ListResponse = Envelope(
  Type.Object({
    page: Type.Integer(),
    page_size: Type.Integer(),
    total: Type.Integer(),
    clients: Type.Array(Client),
  }),
);

export { NullEnvelope };
