// Recognition module error codes (docs/errors.md: error_code in recognition callbacks).
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
