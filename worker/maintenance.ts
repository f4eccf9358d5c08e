import { Queue, Worker } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import type { Logger } from '../common/logger.js';
import type { RedisSettings } from '../common/redis.js';

const MAINTENANCE_QUEUE = 'maintenance';
const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Housekeeping on a schedule that BullMQ shares among all worker processes, so each run happens
 * once however many workers there are: expired idempotency receipts are purged.
 */
export async function startMaintenance(
  pool: DatabasePool,
  connection: RedisSettings,
  prefix: string,
  logger: Logger,
) {
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix });
  queue.on('error', (error) => logger.warn({ err: error }, 'maintenance queue connection error'));
  await queue.upsertJobScheduler(
    'purge-expired-receipts',
    { every: PURGE_EVERY_MS },
    { name: 'purge-expired-receipts', opts: { removeOnComplete: 100, removeOnFail: 100 } },
  );
  const worker = new Worker(
    MAINTENANCE_QUEUE,
    async () => {
      const purged = await purgeExpiredReceipts(pool);
      logger.info({ purged }, 'expired idempotency receipts purged');
      return { purged };
    },
    { connection, prefix, concurrency: 1 },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'maintenance worker connection error'));
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
