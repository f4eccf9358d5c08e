import type { QueueEvents } from 'bullmq';
import type { DatabasePool } from 'slonik';
import type { Command } from '../common/commands/command.js';
import {
  answerFrom,
  failure,
  runWrite,
  type WriteJob,
  type WriteResult,
} from '../common/commands/runWrite.js';
import type { Config } from '../common/config.js';
import { ApiError, errors } from '../common/errors.js';
import { findReceiptFor } from '../common/idempotency/receipts.js';
import {
  acquireLock,
  lockKeyFor,
  newLockToken,
  releaseLock,
  type LockSettings,
} from '../common/idempotency/lock.js';
import type { ApiMetrics } from '../common/metrics.js';
import type { WriteQueue } from '../common/queue.js';
import { FINISHED_RETENTION_SECONDS, watchForResult, WRITE_JOB } from '../common/queue.js';
import type { Redis } from '../common/redis.js';
import type { RecentKeys } from './recentKeys.js';

export interface GatewayDeps {
  config: Config;
  metrics: ApiMetrics;
  pool: DatabasePool;
  redis: Redis;
  queue: WriteQueue;
  queueEvents: QueueEvents;
  recentKeys: RecentKeys;
}

const idempotencyOutcomes: Record<string, string> = {
  idempotency_key_in_flight: 'in_flight',
  idempotency_key_request_mismatch: 'mismatch',
};

/**
 * The API's half of a write. Dry runs are answered here, read-only. Real writes: take the key's
 * in-flight lock (or learn it is done and replay its receipt from Postgres), queue the job for a
 * worker and wait a bounded time for its outcome.
 */
export class WriteGateway {
  private readonly lockSettings: LockSettings;

  constructor(private readonly deps: GatewayDeps) {
    const { WRITE_TIMEOUT_MS, IDEMPOTENCY_TTL_SECONDS } = deps.config;
    this.lockSettings = {
      // The lease outlives the wait: after a 504 the key stays held while the job still runs.
      leaseMs: WRITE_TIMEOUT_MS * 3,
      jobKeyPrefix: deps.queue.toKey(''),
      // A done marker never outlives its receipt.
      doneSeconds: Math.min(IDEMPOTENCY_TTL_SECONDS, FINISHED_RETENTION_SECONDS),
    };
  }

  dryRun(command: Command, job: WriteJob): Promise<WriteResult> {
    return runWrite(this.deps.pool, command, job, {
      dryRun: true,
      jobId: job.requestId,
      idempotencyTtlSeconds: this.deps.config.IDEMPOTENCY_TTL_SECONDS,
    });
  }

  async submit(job: WriteJob): Promise<WriteResult> {
    const result = await this.submitOnce(job);
    // The key was admitted from the recent list and a worker (or the receipt lookup) found it
    // revoked: the next request asks Postgres.
    if (!result.ok && result.error.code === 'invalid_api_key') {
      this.deps.recentKeys.forget(job.apiKeyId);
    }
    const outcome = result.ok
      ? result.replayed
        ? 'replayed'
        : undefined
      : idempotencyOutcomes[result.error.code];
    if (outcome) this.deps.metrics.idempotency.inc({ outcome });
    return result;
  }

  private async submitOnce(job: WriteJob): Promise<WriteResult> {
    const key = job.idempotencyKey;
    if (!key) return this.enqueueAndWait(job);

    const lockKey = lockKeyFor(this.deps.config.QUEUE_PREFIX, job.institution.id, key);
    const token = newLockToken(job.fingerprint, job.requestId);
    let attempt = await acquireLock(this.deps.redis, lockKey, token, this.lockSettings);
    if (attempt.state === 'done') {
      // No worker sees this retry, so the key is confirmed here, in the same query.
      const { keyLive, completed } = await findReceiptFor(
        this.deps.pool,
        { institutionId: job.institution.id, source: 'client', key },
        job.apiKeyId,
      );
      if (!keyLive) return failure(errors.invalidApiKey());
      if (completed) return answerFrom(completed, job);
      // The receipt expired before its marker did: the key is free.
      attempt = await acquireLock(this.deps.redis, lockKey, token, this.lockSettings, false);
    }
    if (attempt.state === 'in_flight') {
      return failure(
        attempt.holderFingerprint === job.fingerprint
          ? errors.idempotencyKeyInFlight()
          : errors.idempotencyKeyMismatch(),
      );
    }
    try {
      // Once the job has finished, the next caller finds the key done, or free (acquireLock).
      return await this.enqueueAndWait(job);
    } catch (error) {
      // The job may never run (not queued): free the key for a retry. Not awaited: with Redis
      // frozen, a second command would only add its own timeout to the answer, and a lease left
      // behind is settled by the next caller. After a 504 the job still runs and settles it.
      const timedOut = error instanceof ApiError && error.body.code === 'write_timeout';
      if (!timedOut) void releaseLock(this.deps.redis, lockKey, token).catch(() => {});
      throw error;
    }
  }

  private async enqueueAndWait(job: WriteJob): Promise<WriteResult> {
    // Listening before the job exists means its completion cannot be missed.
    const waiting = watchForResult(
      this.deps.queueEvents,
      job.requestId,
      this.deps.config.WRITE_TIMEOUT_MS,
    );
    try {
      await this.deps.queue.add(WRITE_JOB, job, { jobId: job.requestId });
    } catch (error) {
      waiting.cancel();
      throw error;
    }
    const outcome = await waiting.result;
    if (outcome === 'timeout') throw errors.writeTimeout();
    return outcome;
  }
}
