import { Queue, type ConnectionOptions, type JobsOptions, type JobType } from 'bullmq';
import type { WriteJob } from './commands/runWrite.js';
import type { WriteResult } from './commands/writeResult.js';
import { queueLocation, shardLocation, shardOf, type QueueLocation } from './queueShards.js';

export const WRITE_QUEUE = 'writes';
/** BullMQ's name for the job type; one type, the command is in the data. */
export const WRITE_JOB = 'write';

/**
 * One job of a write queue: the writes one API process received at once (in one turn of its event
 * loop) for one shard, so that the BullMQ job, the idempotency leases, their settlement and the
 * reply are paid once per batch rather than once per write. Each write keeps its own receipt,
 * event and answer; the job only carries them.
 */
export interface WriteBatch {
  writes: WriteJob[];
  /** The channel of the API process waiting for the outcomes (common/replies.ts). */
  replyTo: string;
}

/**
 * A job of one write, as API processes queued them before batches. Workers still run them, so
 * that a deployment upgrades its workers first and then its API processes, with no drain.
 */
export type SingleWriteJob = WriteJob & { replyTo?: string };

export type WriteQueueJob = WriteBatch | SingleWriteJob;

/**
 * What a finished job of a batch keeps in Redis, for the dashboard and an operator's tools: each
 * write's status, and whether it replayed an earlier outcome or which error refused it. Not the
 * response body: the waiting API process had it in its reply, Postgres keeps it in the receipt,
 * and a copy in the job and in the queue's event stream would hold every answer's personal data
 * in Redis for FINISHED_RETENTION_SECONDS, at about the size of the job itself again.
 */
export interface WriteSummary {
  requestId: string;
  status: number;
  replayed?: true;
  /** The error's code, for a refused write. */
  code?: string;
}

export const summaryOf = (requestId: string, result: WriteResult): WriteSummary =>
  result.ok
    ? { requestId, status: result.status, ...(result.replayed ? { replayed: true as const } : {}) }
    : { requestId, status: result.status, code: result.error.code };

/**
 * A job's outcome: a summary per write of a batch, in its order; for a job of one write queued
 * by an API process of the release before batches, which may still read it from the job, that
 * write's result.
 */
export type WriteQueueResult = WriteSummary[] | WriteResult;

export const writesOf = (job: WriteQueueJob): readonly WriteJob[] =>
  'writes' in job ? job.writes : [job];

/** At most this many writes go in one job; an API process with more queues several. */
export const MAX_WRITES_PER_JOB = 64;

export type WriteQueue = Queue<WriteQueueJob, WriteQueueResult, typeof WRITE_JOB>;

/** The settings that say where a deployment's write queues are. */
export interface QueueSettings {
  QUEUE_PREFIX: string;
  WRITE_QUEUE_SHARDS: number;
}

const locationsCache = new Map<string, readonly QueueLocation[]>();

/**
 * The write queues of a deployment with `shards` of them (WRITE_QUEUE_SHARDS): one queue named
 * `writes` when there is one shard, else `writes-0` … `writes-<shards-1>`, each in a slot of its
 * own (common/queueShards.ts).
 */
export function writeQueueLocations(queuePrefix: string, shards: number): readonly QueueLocation[] {
  const cacheKey = `${queuePrefix}/${shards}`;
  let locations = locationsCache.get(cacheKey);
  if (!locations) {
    locations =
      shards === 1
        ? [queueLocation(queuePrefix, WRITE_QUEUE)]
        : Array.from({ length: shards }, (_, index) =>
            shardLocation(queuePrefix, WRITE_QUEUE, index, shards),
          );
    locationsCache.set(cacheKey, locations);
  }
  return locations;
}

/**
 * The queue an institution's writes go to. Its prefix is the institution's shard: the keys that
 * belong to the institution's writes (idempotency leases, the worker heartbeat its API reads) are
 * put under it too, so that on a cluster a shard is the unit of failure: a master lost stops the
 * writes of its shard's institutions, and no other's.
 */
export function writeQueueLocationFor(
  queuePrefix: string,
  shards: number,
  institutionId: number,
): QueueLocation {
  const locations = writeQueueLocations(queuePrefix, shards);
  return locations[shardOf(institutionId, shards)]!;
}

/** The key prefix (with its hash tag) of an institution's shard. */
export const shardPrefixFor = (settings: QueueSettings, institutionId: number): string =>
  writeQueueLocationFor(settings.QUEUE_PREFIX, settings.WRITE_QUEUE_SHARDS, institutionId).prefix;

/**
 * How long Redis keeps a completed job, for inspection on the dashboard. Nothing else depends on
 * it: idempotency keeps its own keys (common/idempotency/lock.ts), and Postgres keeps the receipt
 * for IDEMPOTENCY_TTL_SECONDS. Bounds Redis memory to the writes of the last few minutes.
 */
export const FINISHED_RETENTION_SECONDS = 300;

/**
 * How often the workers look for jobs whose lock ran out (BullMQ's stalledInterval). BullMQ moves
 * a job back to its queue only when a check finds its lock gone and the check before had seen it
 * active since the lock was last renewed, so a dead worker's job waits its lock duration plus up to
 * one interval. A quarter of the lock keeps that wait near the lock itself; the check is one short
 * script per queue per interval among all workers (the first to run sets a key that the others'
 * checks find), and it cannot take a job from a live worker, whose renewals keep the lock.
 */
export const stalledCheckIntervalMs = (lockDurationMs: number) =>
  Math.max(1, Math.ceil(lockDurationMs / 4));

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

export function createWriteQueue(
  connection: ConnectionOptions,
  location: QueueLocation,
): WriteQueue {
  const queue: WriteQueue = new Queue(location.name, {
    connection,
    prefix: location.prefix,
    defaultJobOptions: writeJobOptions,
    streams: { events: { maxLen: EVENT_STREAM_MAX_LENGTH } },
  });
  queue.setMaxListeners(0);
  return queue;
}

/** The API's producers: one queue per shard, and the rule choosing an institution's. */
export class WriteQueues {
  constructor(readonly shards: readonly WriteQueue[]) {}

  static open(connection: ConnectionOptions, queuePrefix: string, shards: number): WriteQueues {
    return new WriteQueues(
      writeQueueLocations(queuePrefix, shards).map((location) =>
        createWriteQueue(connection, location),
      ),
    );
  }

  /** Jobs by state, summed over the shards. */
  async counts(...states: JobType[]): Promise<Record<string, number>> {
    const all = await Promise.all(this.shards.map((queue) => queue.getJobCounts(...states)));
    const sum: Record<string, number> = {};
    for (const counts of all)
      for (const [state, count] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + count;
    return sum;
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(this.shards.map((queue) => queue.waitUntilReady()));
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((queue) => queue.close()));
  }
}
