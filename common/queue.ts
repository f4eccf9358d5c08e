import type { EventEmitter } from 'node:events';
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

/**
 * The outcome of a queued write, or 'timeout' after `ttlMs`. Unlike BullMQ's
 * Job.waitUntilFinished, every Redis failure here rejects the returned promise (there it could
 * escape as an unhandled rejection and end the process), so the API can answer 503.
 */
export function waitForResult(
  queue: WriteQueue,
  events: QueueEvents,
  jobId: string,
  ttlMs: number,
): Promise<WriteResult | 'timeout'> {
  // QueueEvents also emits per-job events (`completed:<id>`), which its typings do not list.
  const emitter = events as unknown as EventEmitter;
  return new Promise((resolve, reject) => {
    const completedEvent = `completed:${jobId}`;
    const failedEvent = `failed:${jobId}`;
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      emitter.off(completedEvent, onCompleted);
      emitter.off(failedEvent, onFailed);
      done();
    };
    const onCompleted = (args: { returnvalue: unknown }) =>
      settle(() => resolve(args.returnvalue as WriteResult));
    const onFailed = (args: { failedReason: string }) =>
      settle(() => reject(new Error(args.failedReason)));
    const timer = setTimeout(() => settle(() => resolve('timeout')), ttlMs);
    emitter.on(completedEvent, onCompleted);
    emitter.on(failedEvent, onFailed);
    // A fast job may have finished before the listeners were attached.
    queue
      .getJobState(jobId)
      .then(async (state) => {
        if (state !== 'completed' && state !== 'failed') return;
        const finished = await queue.getJob(jobId);
        if (!finished) return;
        if (state === 'completed') onCompleted({ returnvalue: finished.returnvalue });
        else onFailed({ failedReason: finished.failedReason });
      })
      .catch((error: unknown) => settle(() => reject(error)));
  });
}
