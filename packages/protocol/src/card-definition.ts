// The JSON card definition an application writes (docs/cards.md, "Define a card"), as a type:
// the recognizer checks it (collecting every problem at once, error 30410 over the API) and the
// SDK types template creation with it. The API schema keeps the definition an open object so
// that a bad one gets the recognizer's full list of problems rather than the first schema error.
// Type aliases, not interfaces: they fit the generated open-object body type.

export type StudentNumberSpec = { type: 'bubbles'; digits: number } | { type: 'barcode' };

export type ChapterSpec = {
  title?: string;
  /** Number of fillable areas, numbered from 1 left to right then top to bottom. */
  areas: number;
  /** Areas per row; default and maximum 15. */
  columns?: number;
  /** Start this chapter on a new printed side. */
  new_side?: boolean;
};

export type CardDefinition = {
  /** The application's name for the card; printed in the footer. */
  id: string;
  title?: string;
  /** Content of the QR code, returned as result.qrcode. */
  qrcode: string;
  student_number: StudentNumberSpec;
  /** Print on both sides of each sheet. Default false. */
  duplex?: boolean;
  chapters: ChapterSpec[];
};
