import type { Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { commands } from '../common/commands/registry.js';
import { failure, runWrite, type WriteJob, type WriteResult } from '../common/commands/runWrite.js';
import { isUnavailableError } from '../common/db/unavailable.js';
import { errors } from '../common/errors.js';
import {
  doneMarkerSeconds,
  lockKeyFor,
  newLockToken,
  settleLock,
} from '../common/idempotency/lock.js';
import type { Logger } from '../common/logger.js';
import type { QueueSettings } from '../common/queue.js';
import type { WorkerMetrics } from '../common/metrics.js';
import type { Redis } from '../common/redis.js';
import { sendReply } from '../common/replies.js';
import type { GroupCommit } from './groupCommit.js';

export interface ProcessorDeps {
  pool: DatabasePool;
  groupCommit: GroupCommit;
  /** For settling idempotency leases (common/idempotency/lock.ts). */
  redis: Redis;
  /** Where the idempotency leases are (each in its institution's shard). */
  queues: QueueSettings;
  metrics: WorkerMetrics;
  logger: Logger;
  idempotencyTtlSeconds: number;
}

interface LogContext {
  requestId: string;
  jobId: string | undefined;
  command: string;
}

/** A keyless write's receipt only has to outlive a redelivery of its job. */
const JOB_RECEIPT_TTL_SECONDS = 3_600;

/**
 * job → command → one transaction → result. Delivery is at least once; the transaction's
 * receipt makes a second delivery replay the first one's outcome instead of writing again.
 */
export function createProcessor(deps: ProcessorDeps) {
  const doneSeconds = doneMarkerSeconds(deps.idempotencyTtlSeconds);

  /**
   * Settles the lease the API took on the job's idempotency key (done, or free), in one round
   * trip that ends before the job completes: a client answered 201 who retries at once finds the
   * key done. A lease left unsettled (Redis failing here) lasts until it runs out; a retry then
   * gets 409 meanwhile, or a worker that replays the receipt.
   */
  const settle = async (data: WriteJob, committed: boolean, context: LogContext) => {
    if (!data.idempotencyKey) return;
    const lockKey = lockKeyFor(deps.queues, data.institution.id, data.idempotencyKey);
    const token = newLockToken(data.fingerprint, data.requestId);
    await settleLock(deps.redis, lockKey, token, committed, doneSeconds).catch((error: unknown) =>
      deps.logger.warn({ ...context, err: error }, 'idempotency lease not settled'),
    );
  };

  return async (job: Job<WriteJob, WriteResult>): Promise<WriteResult> => {
    const data = job.data;
    // Bound into each line rather than a child logger per job, which would cost every job.
    const context: LogContext = { requestId: data.requestId, jobId: job.id, command: data.command };
    /**
     * The outcome goes to the waiting API process, after the key is settled and on the same
     * (pipelining) connection, so Redis has the key done before the API can answer.
     */
    const reply = (outcome: { result: WriteResult } | { failed: string }) => {
      if (data.replyTo)
        sendReply(deps.redis, data.replyTo, { jobId: job.id ?? data.requestId, ...outcome });
    };
    const command = commands.get(data.command);
    if (!command) {
      deps.logger.error(context, 'unknown command');
      await settle(data, false, context);
      const result = failure(errors.internal());
      reply({ result });
      return result;
    }
    const started = performance.now();
    if (job.processedOn) {
      const waited = Math.max(0, job.processedOn - job.timestamp) / 1000;
      deps.metrics.jobWait.observe({ command: data.command }, waited);
    }
    let result: WriteResult;
    try {
      result = await runWrite(deps.pool, command, data, {
        dryRun: false,
        jobId: job.id ?? data.requestId,
        idempotencyTtlSeconds: data.idempotencyKey
          ? deps.idempotencyTtlSeconds
          : JOB_RECEIPT_TTL_SECONDS,
        commitCreate: (item) => deps.groupCommit.commit(item),
      });
    } catch (error) {
      if (!isUnavailableError(error)) {
        await settle(data, false, context);
        reply({ failed: String(error) });
        throw error;
      }
      deps.logger.warn({ ...context, err: error }, 'database unavailable');
      result = failure(errors.serviceUnavailable());
    }
    // On one server the settle's command is sent first and the reply after it on the same
    // connection, so Redis applies them in that order. On a cluster they go to the same master
    // (the reply's channel is in the key's slot), but a redirection could retry the settle after
    // the reply: the reply waits for the settle's answer, or a client told 201 who retries at once
    // could find its key still in flight.
    const settled = settle(data, result.ok, context);
    if (deps.redis.isCluster) await settled;
    reply({ result });
    await settled;
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.jobRun.observe({ command: data.command, status: String(result.status) }, seconds);
    if (deps.logger.isLevelEnabled('info')) {
      deps.logger.info(
        {
          ...context,
          status: result.status,
          replayed: result.ok && result.replayed,
          ms: Math.round(seconds * 1000),
        },
        'job done',
      );
    }
    return result;
  };
}
