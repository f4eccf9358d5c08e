import { Queue } from 'bullmq';
import type { Config } from '../../common/config.js';
import { writeQueueLocationFor, writeQueueLocations } from '../../common/queue.js';
import {
  closeQueueConnection,
  queueConnection,
  redisTargetOf,
  type RedisTarget,
} from '../../common/redis.js';

/**
 * A BullMQ handle on the write queue an institution's jobs go to (its shard's, when
 * WRITE_QUEUE_SHARDS > 1), for tests that look at or add jobs. `close()` also closes the cluster
 * client BullMQ shares but does not own.
 */
export function openWriteQueue(
  config: Config,
  institutionId: number,
  target: RedisTarget = redisTargetOf(config),
): Queue {
  const { name, prefix } = writeQueueLocationFor(
    config.QUEUE_PREFIX,
    config.WRITE_QUEUE_SHARDS,
    institutionId,
  );
  const connection = queueConnection(target, 'blocking');
  const queue = new Queue(name, { connection, prefix });
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    closeQueueConnection(connection);
  };
  return queue;
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
