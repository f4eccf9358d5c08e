import type { Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { commands } from '../common/commands/registry.js';
import { failure, runWrite, type WriteJob, type WriteResult } from '../common/commands/runWrite.js';
import { isUnavailableError } from '../common/db/unavailable.js';
import { errors } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { WorkerMetrics } from '../common/metrics.js';
import type { GroupCommit } from './groupCommit.js';

export interface ProcessorDeps {
  pool: DatabasePool;
  groupCommit: GroupCommit;
  metrics: WorkerMetrics;
  logger: Logger;
  idempotencyTtlSeconds: number;
}

/** A keyless write's receipt only has to outlive a redelivery of its job. */
const JOB_RECEIPT_TTL_SECONDS = 3_600;

/**
 * job → command → one transaction → result. Delivery is at least once; the transaction's
 * receipt makes a second delivery replay the first one's outcome instead of writing again.
 */
export function createProcessor(deps: ProcessorDeps) {
  return async (job: Job<WriteJob, WriteResult>): Promise<WriteResult> => {
    const data = job.data;
    const log = deps.logger.child({
      requestId: data.requestId,
      jobId: job.id,
      command: data.command,
    });
    const command = commands.get(data.command);
    if (!command) {
      log.error('unknown command');
      return failure(errors.internal());
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
      if (!isUnavailableError(error)) throw error;
      log.warn({ err: error }, 'database unavailable');
      result = failure(errors.serviceUnavailable());
    }
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.jobRun.observe({ command: data.command, status: String(result.status) }, seconds);
    log.info(
      {
        status: result.status,
        replayed: result.ok && result.replayed,
        ms: Math.round(seconds * 1000),
      },
      'job done',
    );
    return result;
  };
}
