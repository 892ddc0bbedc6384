// The box link: messages between the server and the agent on a box, over MQTT.
// Documented in docs/box-protocol.md. Every message is JSON with `v` (protocol version);
// a receiver ignores fields it does not know, and rejects a `v` it does not speak.
//
// Topics (a box may publish and subscribe only under its own `box/{uuid}/`):
//   box/{uuid}/cmd            server → box   Command            QoS 1
//   box/{uuid}/ack/{node}     box → server   Ack                QoS 1 (to the node that asked)
//   box/{uuid}/state          box → server   BoxState           QoS 1, retained
//   box/{uuid}/presence       box → server   Presence           QoS 1, retained; also the last will
//   box/{uuid}/event          box → server   JobEvent           QoS 1 (durable on the box: box-jobs.ts)
//   box/{uuid}/req            box → server   BoxRequest         QoS 1 (answered by a `reply` command)
import Type, { type Static } from 'typebox';
import { ConnectionType, NetworkType } from './constants.ts';
import { BUZZ_LIMITS } from './api/control.ts';
import { PrinterCapability } from './capability.ts';
import { BoxJobState, type JobCommandType } from './box-jobs.ts';
import { UpdateReport } from './release.ts';

export const BOX_PROTOCOL_VERSION = 1;

export const topics = {
  cmd: (uuid: string) => `box/${uuid}/cmd`,
  ack: (uuid: string, node: string) => `box/${uuid}/ack/${node}`,
  state: (uuid: string) => `box/${uuid}/state`,
  presence: (uuid: string) => `box/${uuid}/presence`,
  event: (uuid: string) => `box/${uuid}/event`,
  req: (uuid: string) => `box/${uuid}/req`,
} as const;

/** Splits `box/{uuid}/{kind}[/rest]`; null for anything else. */
export function parseBoxTopic(topic: string): { uuid: string; kind: string; rest: string | undefined } | null {
  const parts = topic.split('/');
  if (parts.length < 3 || parts[0] !== 'box' || !parts[1] || !parts[2]) return null;
  return { uuid: parts[1], kind: parts[2], rest: parts.length > 3 ? parts.slice(3).join('/') : undefined };
}

const Str = (max = 128) => Type.String({ maxLength: max });

export const PrinterStatus = Type.Object({
  connected: Type.Boolean(),
  supported: Type.Boolean(),
  make: Type.Optional(Str()),
  model: Type.Optional(Str()),
  connection_type: Type.Optional(Type.Enum(ConnectionType)),
  /** 0 = no error; otherwise a printer error code from docs/errors.md ("printer error codes"). */
  error_code: Type.Integer({ minimum: 0 }),
  /** IPP printer-state: idle, processing, stopped. */
  state: Type.Optional(Type.Union([Type.Literal('idle'), Type.Literal('processing'), Type.Literal('stopped')])),
  state_reasons: Type.Optional(Type.Array(Str(), { maxItems: 32 })),
  /** Marking technology, from IPP printer-kind / marker-types: drives the inkjet-only controls. */
  kind: Type.Optional(Type.Union([Type.Literal('inkjet'), Type.Literal('laser'), Type.Literal('other')])),
  /** Whether the printer reports completed impressions per job (strict mode). */
  strict: Type.Optional(Type.Boolean()),
  /** Maintenance operations the box can run on this printer. */
  maintenance: Type.Optional(
    Type.Array(
      Type.Union([Type.Literal('head_clean'), Type.Literal('power_ink_flush'), Type.Literal('nozzle_check')]),
      { maxItems: 3 },
    ),
  ),
  /** The Printer capability (docs/api.md), built on the box from the printer's IPP attributes; null
   *  when the box cannot drive this printer (API 30302). Absent while unknown. */
  capability: Type.Optional(Type.Union([PrinterCapability, Type.Null()])),
});
export type PrinterStatus = Static<typeof PrinterStatus>;

export const ScannerStatus = Type.Object({
  connected: Type.Boolean(),
  supported: Type.Boolean(),
  make: Type.Optional(Str()),
  model: Type.Optional(Str()),
  connection_type: Type.Optional(Type.Enum(ConnectionType)),
  state: Type.Optional(Type.Union([Type.Literal('idle'), Type.Literal('processing'), Type.Literal('stopped')])),
  error_code: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The scanner's own words for its state: SANE status names (the last scan's end), eSCL
   *  State/AdfState values. The server normalises them (protocol/device-state.ts). */
  state_reasons: Type.Optional(Type.Array(Str(), { maxItems: 32 })),
  adf_loaded: Type.Optional(Type.Boolean()),
  duplex: Type.Optional(Type.Boolean()),
  resolutions: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 4800 }), { maxItems: 16 })),
});
export type ScannerStatus = Static<typeof ScannerStatus>;

export const BoxState = Type.Object({
  v: Type.Literal(BOX_PROTOCOL_VERSION),
  /** Box clock, Unix ms: informative only; the server stamps its own time. */
  at: Type.Integer({ minimum: 0 }),
  version: Type.Optional(Str(64)),
  firmware: Type.Optional(Str(64)),
  mac: Type.Optional(Str(32)),
  wlan_mac: Type.Optional(Str(32)),
  network_type: Type.Optional(Type.Enum(NetworkType)),
  local_ip: Type.Optional(Str(64)),
  gateway_ip: Type.Optional(Str(64)),
  model: Type.Optional(Str(64)),
  buzzer: Type.Optional(Type.Boolean()),
  printer: PrinterStatus,
  scanner: ScannerStatus,
  /** Random per start of the agent: a task the box took under another boot and no longer
   *  lists in `jobs` was lost with that boot. */
  boot: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** Every job the box holds now (scans and print tasks, queued or running). */
  jobs: Type.Optional(Type.Array(BoxJobState, { maxItems: 10000 })),
  /** The box's X25519 public key for end-to-end encrypted print files, hex (docs/encryption.md). */
  e2e_public_key: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  /** The last agent update and what became of it (docs/updates.md). */
  update: Type.Optional(UpdateReport),
});
export type BoxState = Static<typeof BoxState>;

export const Presence = Type.Object({
  v: Type.Literal(BOX_PROTOCOL_VERSION),
  online: Type.Boolean(),
  /** Random per connection: lets the server drop a stale will or a late "online". */
  session: Type.String({ minLength: 1, maxLength: 64 }),
});
export type Presence = Static<typeof Presence>;

/** Device control commands (docs/control.md; agent.update: docs/updates.md); job commands are in box-jobs.ts. */
export const ControlCommandType = [
  'buzz',
  'reboot',
  'head_clean',
  'power_ink_flush',
  'nozzle_check',
  'agent.update',
] as const;
export type ControlCommandType = (typeof ControlCommandType)[number];
export type CommandType = ControlCommandType | JobCommandType;

export const BuzzParams = Type.Object({
  buzz: Type.Array(Type.Integer({ minimum: 1, maximum: BUZZ_LIMITS.maxBeepMs }), {
    minItems: 1,
    maxItems: BUZZ_LIMITS.maxBeeps,
  }),
  gap: Type.Integer({ minimum: 0, maximum: BUZZ_LIMITS.maxGapMs }),
});
export type BuzzParams = Static<typeof BuzzParams>;

export const Command = Type.Object({
  v: Type.Literal(BOX_PROTOCOL_VERSION),
  id: Type.String({ minLength: 1, maxLength: 64 }),
  type: Type.String({ maxLength: 64 }),
  /** Node id of the server that asked; the ack goes to box/{uuid}/ack/{reply_to}. */
  reply_to: Type.String({ minLength: 1, maxLength: 64 }),
  /** Unix ms after which the box must not act on it (a command stuck in a queue goes stale). */
  expires_at: Type.Integer({ minimum: 0 }),
  params: Type.Record(Type.String(), Type.Unknown()),
});
export type Command = Static<typeof Command>;

export const AckReason = ['not_supported', 'busy', 'failed', 'invalid', 'expired'] as const;
export type AckReason = (typeof AckReason)[number];

export const Ack = Type.Object({
  v: Type.Literal(BOX_PROTOCOL_VERSION),
  id: Type.String({ minLength: 1, maxLength: 64 }),
  ok: Type.Boolean(),
  reason: Type.Optional(Type.Enum(AckReason)),
  message: Type.Optional(Type.String({ maxLength: 512 })),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type Ack = Static<typeof Ack>;

export const BoxEvent = Type.Object({
  v: Type.Literal(BOX_PROTOCOL_VERSION),
  /** Unique per event: the server applies each event once (QoS 1 is at-least-once). */
  id: Type.String({ minLength: 1, maxLength: 64 }),
  type: Type.String({ maxLength: 64 }),
  at: Type.Integer({ minimum: 0 }),
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type BoxEvent = Static<typeof BoxEvent>;
