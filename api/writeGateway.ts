import type { DatabasePool } from 'slonik';
import type { Command } from '../common/commands/command.js';
import { failure, runWrite, type WriteJob } from '../common/commands/runWrite.js';
import type { WriteResult } from '../common/commands/writeResult.js';
import { isRevokedKey } from '../common/auth/liveKey.js';
import type { Config } from '../common/config.js';
import { errors } from '../common/errors.js';
import { leaseAfterQueuedMs } from '../common/idempotency/lock.js';
import type { ApiMetrics } from '../common/metrics.js';
import type { WriteQueues } from '../common/queue.js';
import type { ReplyInbox } from '../common/replies.js';
import type { Redis } from '../common/redis.js';
import type { WorkerPresence } from '../common/workerPresence.js';
import type { RecentKeys } from './recentKeys.js';
import { WriteBatches } from './writeBatches.js';

export interface GatewayDeps {
  config: Config;
  metrics: ApiMetrics;
  pool: DatabasePool;
  redis: Redis;
  /** The write queues; an institution's writes all go to its shard's. */
  queues: WriteQueues;
  /** This process's reply channels: the worker answers each write there. */
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
 * The API's half of a write. Dry runs are answered here, read-only. Real writes take their key's
 * in-flight lease (or learn it is done and replay its receipt from Postgres), are queued for a
 * worker with the other writes of the same moment (api/writeBatches.ts) and wait a bounded time
 * for their outcome.
 */
export class WriteGateway {
  private readonly batches: WriteBatches;

  constructor(private readonly deps: GatewayDeps) {
    this.batches = new WriteBatches({
      pool: deps.pool,
      redis: deps.redis,
      settings: deps.config,
      queues: deps.queues.shards,
      replies: deps.replies,
      writeTimeoutMs: deps.config.WRITE_TIMEOUT_MS,
      extendedLeaseMs: leaseAfterQueuedMs(deps.config.WRITE_TIMEOUT_MS),
      onQueued: (writes) => deps.metrics.writesPerJob.observe(writes),
    });
  }

  dryRun(command: Command, job: WriteJob): Promise<WriteResult> {
    return runWrite(this.deps.pool, command, job, {
      dryRun: true,
      idempotencyTtlSeconds: this.deps.config.IDEMPOTENCY_TTL_SECONDS,
    });
  }

  async submit(job: WriteJob): Promise<WriteResult> {
    // With no worker running, a write would only wait for WRITE_TIMEOUT_MS and leave its key held:
    // answer 503 at once, with nothing queued and the key free.
    if (!(await this.deps.workers.present(job.institution.id))) return noWorker;
    const result = await this.batches.submit(job);
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
}
