import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { WriteJob, WriteResult } from './commands/runWrite.js';

export const WRITE_QUEUE = 'writes';
/** BullMQ's name for the job type; one type, the command is in the data. */
export const WRITE_JOB = 'write';

export type WriteQueue = Queue<WriteJob, WriteResult, typeof WRITE_JOB>;

/**
 * How long Redis keeps a completed job, for inspection on the dashboard. Nothing else depends on
 * it: idempotency keeps its own keys (common/idempotency/lock.ts), and Postgres keeps the receipt
 * for IDEMPOTENCY_TTL_SECONDS. Bounds Redis memory to the writes of the last few minutes.
 */
export const FINISHED_RETENTION_SECONDS = 300;

/** Failures are kept a day for inspection. */
const writeJobOptions: JobsOptions = {
  attempts: 1,
  removeOnComplete: { age: FINISHED_RETENTION_SECONDS, count: 50_000 },
  removeOnFail: { age: 24 * 3600 },
};

/**
 * BullMQ writes every job's events to a stream, which Redis trims to this many. Nothing in the
 * write path reads it (the worker answers each API process on its own channel:
 * common/replies.ts); it is there for the dashboard and for an operator's tools, so it is kept
 * short.
 */
export const EVENT_STREAM_MAX_LENGTH = 10_000;

export function createWriteQueue(connection: ConnectionOptions, prefix: string): WriteQueue {
  const queue: WriteQueue = new Queue(WRITE_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: writeJobOptions,
    streams: { events: { maxLen: EVENT_STREAM_MAX_LENGTH } },
  });
  queue.setMaxListeners(0);
  return queue;
}
