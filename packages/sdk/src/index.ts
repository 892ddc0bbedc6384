// @boxhub/sdk: the typed client of the boxhub API (docs/sdk.md).
export { Boxhub, type BoxhubOptions } from './client.ts';
export { BoxhubError, type BoxhubErrorKind, type ErrorData } from './errors.ts';
export { ErrorCode, RecognitionErrorCode, type ErrorCodeName } from './generated/error-codes.ts';
export type { CallOptions, RetryEvent, TransportOptions } from './transport.ts';
export type { RetryOptions } from './retry.ts';
export type { Body, GetPath, GetResult, OperationKey, PostPath, PostResult, Query } from './api-types.ts';
export type { Device } from './resources/devices.ts';
export type { CallbackDelivery } from './resources/callback-log.ts';
export { operations } from './operations.ts';
export {
  CallbackReceiver,
  type CallbackHeaders,
  type CallbackReceiverOptions,
  type ReceivedCallback,
} from './callbacks/receiver.ts';
export {
  parseCallback,
  type CallbackBody,
  type CallbackEvent,
  type CallbackEventName,
  type KnownCallbackEvent,
  type UnknownCallbackEvent,
} from './callbacks/events.ts';
export { InvalidCallbackError, type InvalidCallbackReason } from './callbacks/errors.ts';
export {
  DirectTransferReceiver,
  MemoryDirectState,
  type DirectAnswer,
  type DirectHeaders,
  type DirectPage,
  type DirectPagesBatch,
  type DirectReceiverState,
  type DirectScanEnd,
  type DirectTransferReceiverOptions,
} from './direct/receiver.ts';
export { SDK_VERSION } from './version.ts';
export type { paths, webhooks } from './generated/openapi.ts';
export type { ScanInfo, ScanItem, WaitOptions } from './resources/scan.ts';
export type { PrintInfo } from './resources/print.ts';
export type { TaskHistory, TaskHistoryEntry } from './resources/tasks.ts';
export type {
  RecognitionTask,
  CardTemplate,
  CardTemplateCreate,
  CardDefinition,
  ReviewList,
  ReviewItem,
  ReviewPage,
} from './resources/recognition.ts';
export { DownloadError, WaitTimeoutError } from './helpers-errors.ts';
export {
  decryptDirectPage,
  decryptScanItem,
  decryptScanItemFile,
  E2eError,
  encryptFileForBox,
  encryptForBox,
  generateKeyPair,
  keyId,
  type E2eKeyPair,
  type EncryptedItem,
  type EncryptedPrintFile,
} from './e2e.ts';
