import { Queue, QueueEvents, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { WriteJob, WriteResult } from './commands/runWrite.js';

export const WRITE_QUEUE = 'writes';
/** BullMQ's name for the job type; one type, the command is in the data. */
export const WRITE_JOB = 'write';

export type WriteQueue = Queue<WriteJob, WriteResult, typeof WRITE_JOB>;

/**
 * Finished jobs are kept briefly: a waiter that subscribes just after a fast job finished must
 * still find its result ("Missing key for job" otherwise). Failures are kept for inspection.
 */
export const writeJobOptions: JobsOptions = {
  attempts: 1,
  removeOnComplete: { age: 300, count: 50_000 },
  removeOnFail: { age: 24 * 3600 },
};

export function createWriteQueue(connection: ConnectionOptions, prefix: string): WriteQueue {
  const queue: WriteQueue = new Queue(WRITE_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: writeJobOptions,
  });
  queue.setMaxListeners(0);
  return queue;
}

export function createWriteQueueEvents(connection: ConnectionOptions, prefix: string): QueueEvents {
  const events = new QueueEvents(WRITE_QUEUE, { connection, prefix });
  // One waiter per in-flight request listens here.
  events.setMaxListeners(0);
  return events;
}
