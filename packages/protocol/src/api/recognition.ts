// Feedback-card recognition (spec "Feedback-card recognition endpoint", "Recognition task") and
// card templates (boxhub's: recognition create carries only a callback URL, so an application
// keeps its card templates here; docs/cards.md).
import Type, { type Static } from 'typebox';
import { CallbackUrl } from './callbacks.ts';
import { Envelope, Id, NullEnvelope } from './envelope.ts';

export const EssCreateBody = Type.Object({ callback_url: CallbackUrl }, { additionalProperties: false });
export type EssCreateBody = Static<typeof EssCreateBody>;
export const EssCreateResult = Type.Object({
  uuid: Type.String({ description: 'recognition task UUID; result callbacks carry it' }),
  direct_addr: Type.String({ description: 'give it as options.direct_addr of one scan create (direct_mode 1 or 2): that scan\'s pages are recognized' }),
  expires_at: Type.Integer({ description: 'Unix seconds, about 24 hours after creation' }),
});
export type EssCreateResult = Static<typeof EssCreateResult>;
export const EssCreateResponse = Envelope(EssCreateResult);

/** The card definition (docs/cards.md, "Define a card"); checked by the recognizer's rules. */
export const CardDefinition = Type.Object({}, { additionalProperties: true, description: 'a card definition as in docs/cards.md: id, title, qrcode, student_number, duplex, chapters' });

export const CardTemplateCreateBody = Type.Object({
  definition: CardDefinition,
  students: Type.Optional(Type.Array(Type.Object({
    student_id: Type.String({ minLength: 1, maxLength: 32 }),
    name: Type.Optional(Type.String({ maxLength: 80 })),
  }, { additionalProperties: false }), { maxItems: 500, description: 'personalised cards: one card per student, in order, number and name printed' })),
}, { additionalProperties: false });
export type CardTemplateCreateBody = Static<typeof CardTemplateCreateBody>;

export const CardTemplateView = Type.Object({
  template_id: Type.String({ description: 'the template\'s id (the layout id printed on every side, 8 hex digits)' }),
  card_id: Type.String({ description: 'the definition\'s id' }),
  created_at: Type.Integer({ description: 'Unix ms' }),
  pdf_url: Type.String({ description: 'the printable PDF (A4, print at 100 %), valid 1 hour' }),
  layout: Type.Optional(Type.Unknown({ description: 'the layout (boxhub-card-layout v1): where each area, cell and code is, in mm' })),
});
export type CardTemplateView = Static<typeof CardTemplateView>;
export const CardTemplateResponse = Envelope(CardTemplateView);

export const CardTemplateListBody = Type.Object({}, { additionalProperties: false });
export const CardTemplateList = Type.Object({ templates: Type.Array(CardTemplateView) });
export type CardTemplateList = Static<typeof CardTemplateList>;
export const CardTemplateListResponse = Envelope(CardTemplateList);

export const CardTemplateIdBody = Type.Object({ template_id: Id('template id') }, { additionalProperties: false });
export type CardTemplateIdBody = Static<typeof CardTemplateIdBody>;
export const CardTemplateDeleteResponse = NullEnvelope;
