import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Config } from '../../common/config.js';
import {
  writeQueueLocationFor,
  writeQueueLocations,
  writesOf,
  type WriteQueueJob,
} from '../../common/queue.js';
import type { QueueLocation } from '../../common/queueShards.js';
import {
  closeQueueConnection,
  queueConnection,
  redisTargetOf,
  type RedisTarget,
} from '../../common/redis.js';

/**
 * A BullMQ handle on any of the service's queues, on one Redis or a cluster as the target says.
 * `close()` also closes the cluster client BullMQ shares but does not own.
 */
export function openQueue(location: QueueLocation, target: RedisTarget): Queue {
  const connection = queueConnection(target, 'blocking');
  const queue = new Queue(location.name, { connection, prefix: location.prefix });
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    closeQueueConnection(connection);
  };
  return queue;
}

/**
 * A BullMQ handle on the write queue an institution's jobs go to (its shard's, when
 * WRITE_QUEUE_SHARDS > 1), for tests that look at or add jobs.
 */
export function openWriteQueue(
  config: Config,
  institutionId: number,
  target: RedisTarget = redisTargetOf(config),
): Queue {
  return openQueue(
    writeQueueLocationFor(config.QUEUE_PREFIX, config.WRITE_QUEUE_SHARDS, institutionId),
    target,
  );
}

/**
 * The event stream of the write queue an institution's jobs go to. It blocks on its connection,
 * so it has one of its own (on a cluster too), closed with it.
 */
export function openWriteQueueEvents(config: Config, institutionId: number): QueueEvents {
  const { name, prefix } = writeQueueLocationFor(
    config.QUEUE_PREFIX,
    config.WRITE_QUEUE_SHARDS,
    institutionId,
  );
  const connection = queueConnection(redisTargetOf(config), 'blocking');
  const events = new QueueEvents(name, { connection, prefix });
  const close = events.close.bind(events);
  events.close = async () => {
    await close();
    closeQueueConnection(connection);
  };
  return events;
}

/**
 * Handles on every write queue shard (one when WRITE_QUEUE_SHARDS is 1); closing the first
 * closes them all and their connection.
 */
export function openWriteQueues(config: Config): Queue[] {
  const connection = queueConnection(redisTargetOf(config), 'blocking');
  const queues = writeQueueLocations(config.QUEUE_PREFIX, config.WRITE_QUEUE_SHARDS).map(
    ({ name, prefix }) => new Queue(name, { connection, prefix }),
  );
  const [first] = queues;
  const close = first!.close.bind(first);
  first!.close = async () => {
    await Promise.all([close(), ...queues.slice(1).map((queue) => queue.close())]);
    closeQueueConnection(connection);
  };
  return queues;
}

/**
 * The active job that carries the write with this idempotency key (a job carries the writes an
 * API process queued together), and where that write is in it: its result is the job's return
 * value at the same index.
 */
export async function activeWriteWithKey(
  queue: Queue,
  key: string,
): Promise<{ job: Job<WriteQueueJob>; index: number } | undefined> {
  for (const job of (await queue.getActive()) as Job<WriteQueueJob>[]) {
    const index = writesOf(job.data).findIndex((write) => write.idempotencyKey === key);
    if (index >= 0) return { job, index };
  }
  return undefined;
}

/** The writes carried by the jobs workers hold on these queues. */
export async function activeWrites(queues: readonly Queue[]): Promise<number> {
  let writes = 0;
  for (const queue of queues)
    for (const job of (await queue.getActive()) as Job<WriteQueueJob>[])
      writes += writesOf(job.data).length;
  return writes;
}
