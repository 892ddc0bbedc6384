// @boxhub/recognizer: feedback cards, from definition to printable template and from scanned
// pages to per-student results. A pure library: no HTTP, no database (docs/cards.md).
export {
  validateCardDefinition,
  parseCardDefinition,
  CardDefinitionError,
  LIMITS as CARD_LIMITS,
} from './card-definition.ts';
export type { CardDefinition, ChapterSpec, StudentNumberSpec } from './card-definition.ts';
export { generateTemplate, planTemplate, printedSides } from './template-pdf.ts';
export type { TemplateOptions, TemplateStudent, CardDrawing, SideDrawing } from './template-pdf.ts';
export { computeLayout, layoutKey, LayoutError } from './layout.ts';
export type { Layout, LayoutSide, LayoutArea, StudentCell, LayoutFiducial, Box } from './layout.ts';
export { createLayoutSet, loadLayoutDirs, LayoutFormatError } from './layout-store.ts';
export type { LayoutSet } from './layout-store.ts';
export { recognizePage, recognizeGrey } from './page-recognizer.ts';
export type { PageReading, AreaReading, PageDiagnostics } from './page-recognizer.ts';
export type { AreaState } from './mark-classifier.ts';
export { StudentAssembler } from './student-assembler.ts';
export { poolStudent } from './student-pool.ts';
export type { SideEvidence } from './student-pool.ts';
export type { PageSource, StudentResult, StudentFills } from './student-assembler.ts';
export { RECOGNITION_ERRORS } from './error-codes.ts';
export type { RecognitionErrorCode } from './error-codes.ts';
export { PagePool } from './page-pool.ts';
export type { PagePoolOptions, PageLayouts } from './page-pool.ts';
export type { DrawOp } from './page-drawing.ts';
export { scanPages, SCAN_LIMITS, type ScanPage, type ScanPagesOptions, type PageVia } from './scan-pages.ts';
export {
  pageOverlay,
  cornerHomography,
  overlayShapes,
  annotatePage,
  imageSize,
  OVERLAY_COLOURS,
} from './page-overlay.ts';
export type { PageOverlay, OverlayArea, OverlayEllipse } from './page-overlay.ts';
