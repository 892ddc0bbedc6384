// The one error catalog of the API. Services throw `ApiError` with a key from here; a single
// handler at the HTTP edge turns every failure into `{code, msg, data}` (docs/api.md, "Conventions").
// docs/errors.md is checked against this table by a test, so add a row there too.
//
// Ranges: 0 success; 1xxxx request problems (boxhub's own); 2xxxx application and
// permission; 3xxxx device, scan (302xx) and print (303xx). The codes docs/errors.md marks
// *contract* (20005, 30002, 30003, 30204, 30301, 30302) keep their meaning for good;
// recognition and card templates are 304xx.
export const errorCatalog = {
  OK: { code: 0, msg: 'success' },
  INVALID_PARAMETER: { code: 10001, msg: 'invalid parameter' },
  MALFORMED_JSON: { code: 10002, msg: 'request body is not valid JSON' },
  PAYLOAD_TOO_LARGE: { code: 10003, msg: 'request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { code: 10004, msg: 'request body must be application/json' },
  ROUTE_NOT_FOUND: { code: 10005, msg: 'no such endpoint' },
  METHOD_NOT_ALLOWED: { code: 10006, msg: 'method not allowed for this endpoint' },
  RATE_LIMITED: { code: 10007, msg: 'too many requests' },
  URL_NOT_ALLOWED: { code: 10008, msg: 'URL points to an address the service may not call' },
  MALFORMED_REQUEST: { code: 10009, msg: 'malformed HTTP request' },
  NOT_SUPPORTED_YET: { code: 10010, msg: 'this option is not supported yet' },
  SERVER_BUSY: { code: 10429, msg: 'this server node is busy with document and image work; try again later' },
  INTERNAL_ERROR: { code: 10500, msg: 'internal error' },
  SERVICE_UNAVAILABLE: { code: 10503, msg: 'service temporarily unavailable' },
  UNAUTHENTICATED: { code: 20001, msg: 'missing or invalid API key' },
  NOT_OPERATOR: { code: 20003, msg: 'missing or invalid operator token' },
  NO_CAPABILITY: { code: 20005, msg: 'application has no permission for this capability' },
  NOT_FOUND: { code: 20404, msg: 'resource not found' },
  CALLBACK_PENDING: { code: 20409, msg: 'callback is still being delivered' },
  E2E_APP_KEY_MISSING: { code: 20601, msg: 'the application has registered no public key for encryption' },
  DEVICE_NOT_FOUND: { code: 30002, msg: 'device does not exist' },
  DEVICE_ALREADY_BOUND: { code: 30003, msg: 'device is already bound' },
  DEVICE_OFFLINE: { code: 30004, msg: 'device is offline' },
  DEVICE_TIMEOUT: { code: 30005, msg: 'device did not acknowledge in time' },
  DEVICE_NOT_SUPPORTED: { code: 30006, msg: 'operation not supported by this device' },
  DEVICE_COOLDOWN: { code: 30007, msg: 'operation refused: too soon after the previous one' },
  DEVICE_REJECTED: { code: 30008, msg: 'device rejected the command' },
  DEVICE_BUSY: { code: 30009, msg: 'device is busy' },
  SCANNER_NOT_CONNECTED: { code: 30201, msg: 'scanner not connected' },
  SCANNER_BUSY: { code: 30202, msg: 'scanner is busy or in an error state' },
  SCANNER_NO_PAPER: { code: 30203, msg: "no paper in the scanner's feeder" },
  SCAN_EXISTS: { code: 30204, msg: 'a scan action already exists on the device' },
  SCAN_OPTION_UNSUPPORTED: { code: 30205, msg: 'the scanner cannot scan with these options' },
  SCAN_ENCRYPTED: { code: 30207, msg: 'the scan is end-to-end encrypted: the service cannot read its pages' },
  PRINTER_NOT_CONNECTED: { code: 30301, msg: 'printer not connected' },
  PRINTER_UNSUPPORTED: { code: 30302, msg: 'unsupported printer model' },
  PRINT_OPTION_UNSUPPORTED: { code: 30303, msg: 'print option not supported by the printer' },
  PRINT_FILE_INVALID: { code: 30304, msg: 'the file is not a printable PDF or JPEG' },
  PRINT_FILE_TOO_LARGE: { code: 30305, msg: 'the file is over the print limits' },
  PRINT_PAGE_SIZE_MISMATCH: { code: 30306, msg: 'the page size does not match media_size' },
  PRINT_PAGE_RANGES_OUT_OF_BOUNDS: { code: 30307, msg: 'page_ranges names a page the document does not have' },
  PRINTER_ERROR: { code: 30308, msg: 'the printer reports an error' },
  PRINT_CHECKSUM_MISMATCH: { code: 30309, msg: 'the file does not match file_check_sum' },
  PRINT_FETCH_FAILED: { code: 30310, msg: 'the file could not be fetched from file_url' },
  E2E_BOX_KEY_MISSING: {
    code: 30311,
    msg: 'the box has not reported a public key for encryption (its agent has no end-to-end encryption)',
  },
  RECOGNITION_TASK_TAKEN: { code: 30401, msg: 'the recognition task already serves another scan' },
  RECOGNITION_TASK_UNAVAILABLE: { code: 30402, msg: 'direct_addr names no open recognition task of this application' },
  CARD_DEFINITION_INVALID: { code: 30410, msg: 'the card definition is not valid' },
  CARD_TEMPLATE_LIMIT: { code: 30411, msg: 'the application has too many card templates' },
  REVIEW_REVISION_CONFLICT: { code: 30420, msg: "the student's result was corrected meanwhile" },
  REVIEW_CORRECTION_INVALID: { code: 30421, msg: 'the correction cannot make a result' },
  RELEASE_INVALID: { code: 30501, msg: 'the release does not match its manifest' },
  RELEASE_EXISTS: { code: 30502, msg: 'a release of this version and platform exists already' },
} as const satisfies Record<string, { code: number; msg: string }>;

export type ErrorKey = keyof typeof errorCatalog;

export class ApiError extends Error {
  readonly key: ErrorKey;
  readonly code: number;
  readonly data: Record<string, unknown> | null;
  constructor(key: ErrorKey, message?: string, data: Record<string, unknown> | null = null) {
    super(message ?? errorCatalog[key].msg);
    this.name = 'ApiError';
    this.key = key;
    this.code = errorCatalog[key].code;
    this.data = data;
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
