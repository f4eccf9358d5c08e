import type { EventEmitter } from 'node:events';
import { Queue, QueueEvents, type ConnectionOptions, type JobsOptions } from 'bullmq';
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
 * The API learns each write's outcome from the queue's event stream, which Redis trims to this
 * many events (BullMQ's default is 10,000: about two seconds of writes at full speed, five events
 * each). An API process that falls behind for longer (a long GC pause, a starved CPU) would
 * find its outcomes trimmed away and answer 504 to writes that succeeded. 100,000 events cover
 * about 20 s at 1,000 writes/s, for some 14 MB of Redis.
 */
export const EVENT_STREAM_MAX_LENGTH = 100_000;

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

export function createWriteQueueEvents(connection: ConnectionOptions, prefix: string): QueueEvents {
  const events = new QueueEvents(WRITE_QUEUE, { connection, prefix });
  // One waiter per in-flight request listens here.
  events.setMaxListeners(0);
  return events;
}

export interface ResultWatch {
  /** The job's outcome, or 'timeout' after `ttlMs`; rejects if the job failed. */
  result: Promise<WriteResult | 'timeout'>;
  /** Stops listening (the job was never queued). */
  cancel(): void;
}

/**
 * Listens for one job's outcome. Call it before adding the job: QueueEvents reads the event
 * stream onwards from where it started, so an outcome can then not be missed, and no Redis
 * round trip is needed to ask whether the job already finished. Unlike BullMQ's
 * Job.waitUntilFinished, nothing here can escape as an unhandled rejection.
 */
export function watchForResult(events: QueueEvents, jobId: string, ttlMs: number): ResultWatch {
  // QueueEvents also emits per-job events (`completed:<id>`), which its typings do not list.
  const emitter = events as unknown as EventEmitter;
  const completedEvent = `completed:${jobId}`;
  const failedEvent = `failed:${jobId}`;
  let settle: (done: () => void) => void = () => {};
  const result = new Promise<WriteResult | 'timeout'>((resolve, reject) => {
    let settled = false;
    settle = (done) => {
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
  });
  return { result, cancel: () => settle(() => {}) };
}
