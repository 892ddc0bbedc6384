// Recognition module error codes (docs/errors.md: error_code in recognition callbacks): defined
// in the protocol package beside scan's and print's codes, re-exported here for the engine.
export { RECOGNITION_ERRORS, type RecognitionErrorCode } from '@boxhub/protocol/recognition-errors.ts';
