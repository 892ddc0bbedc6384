// What the services are told of the configuration (docs/configuration.md): each kind's and each
// module's settings, taken from the one Config the start was given.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import type { ServiceSettings } from '../services.ts';

export function serviceSettings(config: Config, db: Db, log: Logger): ServiceSettings {
  return {
    callbacks: { allowPrivateNetworks: config.allowPrivateNetworks, secretGraceMs: config.callbackSecretGraceMs },
    scan: {
      taskTtlMs: config.taskTtlMs,
      downloadUrlTtlMs: config.downloadUrlTtlMs,
      uploadUrlTtlMs: config.uploadUrlTtlMs,
      blobMaxBytes: config.blobMaxBytes,
    },
    print: {
      taskTtlMs: config.taskTtlMs,
      downloadUrlTtlMs: config.downloadUrlTtlMs,
      maxFileBytes: config.printMaxFileBytes,
      fetchTimeoutMs: config.printFetchTimeoutMs,
      countWaitMs: config.printCountWaitMs,
    },
    recognition: {
      taskTtlMs: config.taskTtlMs,
      downloadUrlTtlMs: config.downloadUrlTtlMs,
      endGraceMs: config.recognitionEndGraceMs,
      ...(config.recognitionWorkers ? { workers: config.recognitionWorkers } : {}),
    },
    deviceEventSettleMs: config.deviceEventSettleMs,
    rollouts: { stepMs: config.rolloutStepMs, sendTimeoutMs: config.commandTimeoutMs },
    ...(db.dataVersion ? { dataVersion: db.dataVersion } : {}),
    onError: (err, what) => log.warn({ err }, `${what} failed`),
  };
}
