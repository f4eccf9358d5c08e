import type { DatabasePool } from 'slonik';
import type { Command } from '../common/commands/command.js';
import {
  answerFrom,
  failure,
  runWrite,
  type WriteJob,
  type WriteResult,
} from '../common/commands/runWrite.js';
import { isRevokedKey, revokedKey } from '../common/auth/liveKey.js';
import type { Config } from '../common/config.js';
import { ApiError, errors } from '../common/errors.js';
import { findReceiptFor } from '../common/idempotency/receipts.js';
import {
  acquireLock,
  EXTEND_AFTER_MS,
  extendLock,
  leaseAfterQueuedMs,
  lockKeyFor,
  newLockToken,
  releaseLock,
} from '../common/idempotency/lock.js';
import type { ApiMetrics } from '../common/metrics.js';
import { WRITE_JOB, type WriteQueues } from '../common/queue.js';
import type { ReplyInbox } from '../common/replies.js';
import type { Redis } from '../common/redis.js';
import type { WorkerPresence } from '../common/workerPresence.js';
import type { RecentKeys } from './recentKeys.js';

export interface GatewayDeps {
  config: Config;
  metrics: ApiMetrics;
  pool: DatabasePool;
  redis: Redis;
  /** The write queues; an institution's writes all go to its shard's. */
  queues: WriteQueues;
  /** This process's reply channel: the worker answers each write there. */
  replies: ReplyInbox;
  recentKeys: RecentKeys;
  workers: WorkerPresence;
}

const noWorker = failure(
  errors.serviceUnavailable(
    'No worker is running to commit writes. Nothing was written; retry shortly with the same Idempotency-Key.',
  ),
);

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
  private readonly extendedLeaseMs: number;

  constructor(private readonly deps: GatewayDeps) {
    this.extendedLeaseMs = leaseAfterQueuedMs(deps.config.WRITE_TIMEOUT_MS);
  }

  dryRun(command: Command, job: WriteJob): Promise<WriteResult> {
    return runWrite(this.deps.pool, command, job, {
      dryRun: true,
      jobId: job.requestId,
      idempotencyTtlSeconds: this.deps.config.IDEMPOTENCY_TTL_SECONDS,
    });
  }

  async submit(job: WriteJob): Promise<WriteResult> {
    // With no worker running, a write would only wait for WRITE_TIMEOUT_MS and leave its key held:
    // answer 503 at once, with nothing queued and the key free.
    if (!(await this.deps.workers.present(job.institution.id))) return noWorker;
    const result = await this.submitOnce(job);
    // The key was admitted from the recent list and a worker (or the receipt lookup) found it
    // revoked: the next request asks Postgres.
    if (isRevokedKey(result)) {
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

    const { redis } = this.deps;
    const lockKey = lockKeyFor(this.deps.config, job.institution.id, key);
    const token = newLockToken(job.fingerprint, job.requestId);
    let attempt = await acquireLock(redis, lockKey, token);
    if (attempt.state === 'done') {
      // No worker sees this retry, so the key is confirmed here, in the same query.
      const { keyLive, completed } = await findReceiptFor(
        this.deps.pool,
        { institutionId: job.institution.id, source: 'client', key },
        job.apiKeyId,
      );
      if (!keyLive) return revokedKey;
      if (completed) return answerFrom(completed, job);
      // The receipt expired before its marker did: the key is free.
      attempt = await acquireLock(redis, lockKey, token, false);
    }
    if (attempt.state === 'in_flight') {
      return failure(
        attempt.holderFingerprint === job.fingerprint
          ? errors.idempotencyKeyInFlight()
          : errors.idempotencyKeyMismatch(),
      );
    }
    // The lease is short until the job is queued; a write still unanswered after EXTEND_AFTER_MS
    // (or answered 504) gets the long lease (common/idempotency/lock.ts). Redis commands here are
    // not awaited: with Redis frozen, one would only add its own timeout to the answer.
    let extension: NodeJS.Timeout | undefined;
    const extend = () => {
      extension = undefined;
      void extendLock(redis, lockKey, token, this.extendedLeaseMs).catch(() => {});
    };
    try {
      // The worker settles the lease before the job completes: done, or free.
      return await this.enqueueAndWait(job, () => {
        extension = setTimeout(extend, EXTEND_AFTER_MS);
      });
    } catch (error) {
      const timedOut = error instanceof ApiError && error.body.code === 'write_timeout';
      // After a 504 the job still runs, and settles the lease when it ends.
      if (timedOut && extension) {
        clearTimeout(extension);
        extend();
      }
      // Otherwise the job may never run (not queued, or failed): the key is free for a retry.
      if (!timedOut) void releaseLock(redis, lockKey, token).catch(() => {});
      throw error;
    } finally {
      clearTimeout(extension);
    }
  }

  private async enqueueAndWait(job: WriteJob, onQueued?: () => void): Promise<WriteResult> {
    // Listening before the job exists means its completion cannot be missed.
    const waiting = this.deps.replies.watch(job.requestId, this.deps.config.WRITE_TIMEOUT_MS);
    try {
      await this.deps.queues
        .for(job.institution.id)
        .add(
          WRITE_JOB,
          { ...job, replyTo: this.deps.replies.channelFor(job.institution.id) },
          { jobId: job.requestId },
        );
    } catch (error) {
      waiting.cancel();
      throw error;
    }
    onQueued?.();
    const outcome = await waiting.result;
    if (outcome === 'timeout') throw errors.writeTimeout();
    return outcome;
  }
}
