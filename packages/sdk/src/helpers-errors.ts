// Errors of the SDK's helpers (not of API calls, which fail with BoxhubError).

/** A wait (waitForFinish) ran out of time; the task goes on. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/** A download did not give the file the service describes (HTTP error, MD5 or size). */
export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  /** HTTP status of the download, when the failure was one. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}
