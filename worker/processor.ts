import type { Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { commands } from '../common/commands/registry.js';
import { failure, runWrite, type WriteJob } from '../common/commands/runWrite.js';
import type { WriteResult } from '../common/commands/writeResult.js';
import { isUnavailableError } from '../common/db/unavailable.js';
import { errors } from '../common/errors.js';
import {
  doneMarkerSeconds,
  lockKeyFor,
  newLockToken,
  settleLeases,
} from '../common/idempotency/lock.js';
import type { Logger } from '../common/logger.js';
import {
  summaryOf,
  writesOf,
  type QueueSettings,
  type WriteQueueJob,
  type WriteQueueResult,
} from '../common/queue.js';
import type { WorkerMetrics } from '../common/metrics.js';
import type { Redis } from '../common/redis.js';
import { replyWithLeases, sendReplies, type Reply } from '../common/replies.js';
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

/** A keyless write's receipt only has to outlive a redelivery of its job. */
const JOB_RECEIPT_TTL_SECONDS = 3_600;

/** One write's outcome: its result, or the error that stopped it (answered 500). */
type Outcome = { result: WriteResult } | { failed: string };

/** A write of the job that has its outcome, to settle and answer. */
interface Answered {
  write: WriteJob;
  outcome: Outcome;
}

/**
 * job → its writes, side by side → each its own command and transaction → their results. The
 * writes of a job are independent requests that one API process received at once; each commits
 * or is refused alone, and concurrent creates share statements (worker/groupCommit.ts).
 * Delivery is at least once: each write's receipt makes a second delivery of its job replay the
 * first one's outcome instead of writing again.
 */
export function createProcessor(deps: ProcessorDeps) {
  const doneSeconds = doneMarkerSeconds(deps.idempotencyTtlSeconds);

  /** Runs one write; throws only what is neither a business outcome nor Postgres unavailable. */
  const run = async (data: WriteJob, job: Job<WriteQueueJob>): Promise<WriteResult> => {
    const context = { requestId: data.requestId, jobId: job.id, command: data.command };
    const command = commands.get(data.command);
    if (!command) {
      deps.logger.error(context, 'unknown command');
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
        idempotencyTtlSeconds: data.idempotencyKey
          ? deps.idempotencyTtlSeconds
          : JOB_RECEIPT_TTL_SECONDS,
        commitCreate: (item) => deps.groupCommit.commit(item),
      });
    } catch (error) {
      if (!isUnavailableError(error)) throw error;
      deps.logger.warn({ ...context, err: error }, 'database unavailable');
      result = failure(errors.serviceUnavailable());
    }
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
        'write done',
      );
    }
    return result;
  };

  return async (job: Job<WriteQueueJob>): Promise<WriteQueueResult> => {
    const writes = writesOf(job.data);
    const answers = new Answers(deps, doneSeconds, job);
    const outcomes = await Promise.all(
      writes.map((data) =>
        run(data, job).then(
          (result): Outcome => answers.add(data, { result }),
          (error: unknown): Outcome => {
            deps.logger.error(
              { requestId: data.requestId, jobId: job.id, command: data.command, err: error },
              'write failed',
            );
            return answers.add(data, { failed: String(error) });
          },
        ),
      ),
    );
    await answers.sent();
    const failed = outcomes.filter((outcome) => 'failed' in outcome);
    // Kept as a failed job, for an operator to see; the job's other writes are answered.
    if (failed.length > 0) throw new Error(failed.map((outcome) => outcome.failed).join('; '));
    const results = outcomes.map((outcome) => (outcome as { result: WriteResult }).result);
    if (!('writes' in job.data)) return results[0]!;
    return results.map((result, index) => summaryOf(writes[index]!.requestId, result));
  };
}

/**
 * A job's writes are answered as they finish, not when the last one does, so that a write held
 * up (a row lock, a slow statement) delays no other. The writes that finish in the same turn of
 * the event loop (a group commit ends many at once) are settled in one Redis script and answered
 * in one message.
 */
class Answers {
  private waiting: Answered[] = [];
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly doneSeconds: number,
    private readonly job: Job<WriteQueueJob>,
  ) {}

  add(write: WriteJob, outcome: Outcome): Outcome {
    this.waiting.push({ write, outcome });
    if (this.waiting.length === 1) setImmediate(() => this.flush());
    return outcome;
  }

  /** Resolves once every write added so far is settled and answered. */
  async sent(): Promise<void> {
    this.flush();
    await this.sending;
  }

  private flush(): void {
    const answered = this.waiting.splice(0);
    if (answered.length > 0) this.sending = this.sending.then(() => this.send(answered));
  }

  /**
   * Settles the leases the API took on the writes' idempotency keys (done, or free) and answers
   * the writes, in one script (settleLeases): a client answered 201 who retries at once finds
   * the key done. A lease left unsettled (Redis failing here) lasts until it runs out; a retry
   * then gets 409 meanwhile, or a worker that replays the receipt. The reply is still tried
   * then, on its own, as it is for writes without a key.
   */
  private async send(answered: readonly Answered[]): Promise<void> {
    const { deps, job } = this;
    const settlements = answered.flatMap(({ write, outcome }) => {
      if (!write.idempotencyKey) return [];
      return [
        {
          key: lockKeyFor(deps.queues, write.institution.id, write.idempotencyKey),
          token: newLockToken(write.fingerprint, write.requestId),
          committed: 'result' in outcome && outcome.result.ok,
        },
      ];
    });
    const { replyTo } = job.data;
    const reply = replyTo ? { channel: replyTo, message: this.message(answered) } : null;
    const together =
      reply &&
      replyWithLeases(
        deps.redis,
        reply,
        settlements.map(({ key }) => key),
      );
    let replied = false;
    try {
      await settleLeases(deps.redis, settlements, this.doneSeconds, together ?? undefined);
      replied = together !== null;
    } catch (error) {
      deps.logger.warn({ jobId: job.id, err: error }, 'idempotency leases not settled');
    }
    if (reply && !replied) sendReplies(deps.redis, reply);
  }

  /** A reply per write, or, to an API process of the release before batches, its one reply. */
  private message(answered: readonly Answered[]): string {
    if (!('writes' in this.job.data))
      return JSON.stringify({ jobId: this.job.id, ...answered[0]!.outcome });
    return JSON.stringify(
      answered.map(({ write, outcome }): Reply => ({ requestId: write.requestId, ...outcome })),
    );
  }
}
