import { Queue } from 'bullmq';
import type { Config } from '../../common/config.js';
import { writeQueueLocationFor } from '../../common/queue.js';
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
