/** Why a received callback was refused: answer it with a 4xx, never act on it. */
export type InvalidCallbackReason =
  /** webhook-id, webhook-timestamp or webhook-signature missing. */
  | 'headers'
  /** webhook-timestamp more than 5 minutes from now: an old message replayed, or a wrong clock. */
  | 'timestamp'
  /** No signature matches any of the secrets. */
  | 'signature'
  /** Signed, but the body is not JSON or not the shape its event promises. */
  | 'body';

export class InvalidCallbackError extends Error {
  override readonly name = 'InvalidCallbackError';
  readonly reason: InvalidCallbackReason;
  constructor(reason: InvalidCallbackReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
