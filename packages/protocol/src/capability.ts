// The Printer capability shape (docs/api.md), shared by the box (which builds it from the printer's
// IPP attributes: agent/src/drivers/ipp/capability.ts), the box link (it travels in BoxState)
// and the API (GET /api/print/capability, and print create checks options against it).
import Type, { type Static } from 'typebox';
import { ColorMode, Duplex, InputSlot, MediaSize, MediaType, Quality } from './constants.ts';

export const MediaTypeCapability = Type.Object({
  media_type: Type.Enum(MediaType),
  duplex: Type.Array(Type.Enum(Duplex), { maxItems: 8 }),
  borderless: Type.Boolean(),
  quality: Type.Array(Type.Enum(Quality), { maxItems: 8 }),
  input_slot: Type.Optional(Type.Array(Type.Enum(InputSlot), { maxItems: 32 })),
});
export type MediaTypeCapability = Static<typeof MediaTypeCapability>;

export const MediaSizeCapability = Type.Object({
  media_size: Type.Enum(MediaSize),
  media_types: Type.Array(MediaTypeCapability, { maxItems: 32 }),
});
export type MediaSizeCapability = Static<typeof MediaSizeCapability>;

export const PrinterCapability = Type.Object({
  make: Type.String({ maxLength: 128 }),
  model: Type.String({ maxLength: 128 }),
  support_strict: Type.Boolean(),
  color_mode: Type.Array(Type.Enum(ColorMode), { maxItems: 8 }),
  media_sizes: Type.Array(MediaSizeCapability, { maxItems: 128 }),
});
export type PrinterCapability = Static<typeof PrinterCapability>;
