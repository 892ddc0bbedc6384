// Recognition error codes: `error_code` in recognition callbacks (docs/errors.md, "Recognition
// module error codes"; a contract). Beside scan's and print's codes (scan-errors.ts,
// print-errors.ts); the recognizer package re-exports them (its engine sets them) and the SDK
// generates RecognitionErrorCode from them. Documented in docs/errors.md; a test keeps the two in step.
export const RECOGNITION_ERRORS = {
  ok: 0,
  studentNumber: 1001,
  qrcode: 1002,
  chapters: 1003,
  imageAcquisition: 1004,
  communication: 1005,
  noPageData: 50003,
} as const;

export type RecognitionErrorCode = (typeof RECOGNITION_ERRORS)[keyof typeof RECOGNITION_ERRORS];
