import type { QueueEvents } from 'bullmq';
import type { DatabasePool } from 'slonik';
import type { Command } from '../common/commands/command.js';
import { failure, runWrite, type WriteJob, type WriteResult } from '../common/commands/runWrite.js';
import type { Config } from '../common/config.js';
import { ApiError, errors } from '../common/errors.js';
import { findReceipt } from '../common/idempotency/receipts.js';
import { acquireLock, lockKeyFor, newLockToken, releaseLock } from '../common/idempotency/lock.js';
import type { ApiMetrics } from '../common/metrics.js';
import type { WriteQueue } from '../common/queue.js';
import { waitForResult, WRITE_JOB } from '../common/queue.js';
import type { Redis } from '../common/redis.js';

export interface GatewayDeps {
  config: Config;
  metrics: ApiMetrics;
  pool: DatabasePool;
  redis: Redis;
  queue: WriteQueue;
  queueEvents: QueueEvents;
}

const idempotencyOutcomes: Record<string, string> = {
  idempotency_key_in_flight: 'in_flight',
  idempotency_key_request_mismatch: 'mismatch',
};

/**
 * The API's half of a write. Dry runs are answered here, read-only. Real writes: replay a
 * completed key from Postgres, else hold the key's in-flight lock, queue the job for a worker
 * and wait a bounded time for its outcome.
 */
export class WriteGateway {
  constructor(private readonly deps: GatewayDeps) {}

  dryRun(command: Command, job: WriteJob): Promise<WriteResult> {
    return runWrite(this.deps.pool, command, job, {
      dryRun: true,
      jobId: job.requestId,
      idempotencyTtlSeconds: this.deps.config.IDEMPOTENCY_TTL_SECONDS,
    });
  }

  async submit(job: WriteJob): Promise<WriteResult> {
    const result = await this.submitOnce(job);
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

    const completed = await findReceipt(this.deps.pool, {
      institutionId: job.institution.id,
      source: 'client',
      key,
    });
    if (completed) {
      if (completed.fingerprint !== job.fingerprint)
        return failure(errors.idempotencyKeyMismatch());
      return {
        ok: true,
        status: completed.status,
        body: completed.body,
        location: completed.location,
        replayed: true,
      };
    }

    const lockKey = lockKeyFor(this.deps.config.QUEUE_PREFIX, job.institution.id, key);
    const token = newLockToken(job.fingerprint);
    // The lease outlives the wait: after a 504 the key stays locked until the worker finishes.
    const attempt = await acquireLock(
      this.deps.redis,
      lockKey,
      token,
      this.deps.config.WRITE_TIMEOUT_MS * 3,
    );
    if (!attempt.acquired) {
      return failure(
        attempt.holderFingerprint === null || attempt.holderFingerprint === job.fingerprint
          ? errors.idempotencyKeyInFlight()
          : errors.idempotencyKeyMismatch(),
      );
    }
    let keepLock = false;
    try {
      return await this.enqueueAndWait({ ...job, lockToken: token });
    } catch (error) {
      keepLock = error instanceof ApiError && error.body.code === 'write_timeout';
      throw error;
    } finally {
      // Not awaited: with Redis frozen, a second command would only add its own timeout to the
      // answer. A lock left behind expires with its lease.
      if (!keepLock) void releaseLock(this.deps.redis, lockKey, token).catch(() => {});
    }
  }

  private async enqueueAndWait(job: WriteJob): Promise<WriteResult> {
    await this.deps.queue.add(WRITE_JOB, job, { jobId: job.requestId });
    const outcome = await waitForResult(
      this.deps.queue,
      this.deps.queueEvents,
      job.requestId,
      this.deps.config.WRITE_TIMEOUT_MS,
    );
    if (outcome === 'timeout') throw errors.writeTimeout();
    return outcome;
  }
}
