// The application's device callback URL (docs/callbacks.md, "Device events"): where the
// device.online, device.offline, device.printer_state and device.scanner_state events of its
// devices go. boxhub extension (docs/api.md, "Device events").
import Type, { type Static } from 'typebox';
import { CallbackUrl } from './callbacks.ts';
import { Envelope } from './envelope.ts';

export const DeviceCallbackBody = Type.Object(
  {
    callback_url: Type.Union([CallbackUrl, Type.Literal('')], { description: 'where device events go; "" stops them' }),
  },
  { additionalProperties: false },
);
export type DeviceCallbackBody = Static<typeof DeviceCallbackBody>;

export const DeviceCallbackSetting = Type.Object({
  callback_url: Type.Optional(Type.String({ description: 'absent when no device events are sent' })),
  settle_ms: Type.Integer({
    description: 'a change is reported once it has held this long (docs/callbacks.md, "Device events")',
  }),
});
export type DeviceCallbackSetting = Static<typeof DeviceCallbackSetting>;
export const DeviceCallbackResponse = Envelope(DeviceCallbackSetting);
