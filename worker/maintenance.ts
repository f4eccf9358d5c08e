import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { pruneAudit } from '../common/audit/log.js';
import { pruneEvents } from '../common/events/retention.js';
import { pruneImportFiles } from '../common/imports/retention.js';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import { rebuildStaleGivingYears } from '../common/reports/givingYears.js';
import { pruneDeliveries } from '../common/webhooks/attempts.js';
import { disableFailingEndpoints } from '../common/webhooks/health.js';
import type { Logger } from '../common/logger.js';
import { queueLocation } from '../common/queueShards.js';
import { closeWorker } from '../common/shutdown.js';

const MAINTENANCE_QUEUE = 'maintenance';
const PURGE_EVERY_MS = 10 * 60_000;
/**
 * How soon retention reads its fast way again after a change of an institution's fiscal year
 * start (it answers right meanwhile, from the months). Each run is one small query when no
 * institution's start changed.
 */
const GIVING_YEARS_EVERY_MS = 30_000;
const GIVING_YEARS_JOB = 'rebuild-giving-years';

/**
 * Housekeeping on a schedule that BullMQ shares among all worker processes, so each run happens
 * once however many workers there are: expired idempotency receipts are purged, events older
 * than their retention are pruned (audit rows after theirs), import files older than theirs are
 * emptied, and webhook endpoints failing for days are disabled. Every 30 seconds, the giving
 * years of an institution whose fiscal year start changed are built again (retention's fast way
 * back).
 */
export async function startMaintenance(
  pool: DatabasePool,
  connection: ConnectionOptions,
  queuePrefix: string,
  logger: Logger,
  retention: {
    eventRetentionDays: number;
    importFileRetentionDays: number;
    auditRetentionDays: number;
  },
) {
  const { eventRetentionDays, importFileRetentionDays, auditRetentionDays } = retention;
  const { name, prefix } = queueLocation(queuePrefix, MAINTENANCE_QUEUE);
  const queue = new Queue(name, { connection, prefix });
  queue.on('error', (error) => logger.warn({ err: error }, 'maintenance queue connection error'));
  await queue.upsertJobScheduler(
    'purge-expired-receipts',
    { every: PURGE_EVERY_MS },
    { name: 'purge-expired-receipts', opts: { removeOnComplete: 100, removeOnFail: 100 } },
  );
  await queue.upsertJobScheduler(
    GIVING_YEARS_JOB,
    { every: GIVING_YEARS_EVERY_MS },
    { name: GIVING_YEARS_JOB, opts: { removeOnComplete: 100, removeOnFail: 100 } },
  );
  const worker = new Worker(
    name,
    async (job) => {
      if (job.name === GIVING_YEARS_JOB) {
        const givingYearsRebuilt = await rebuildStaleGivingYears(pool);
        if (givingYearsRebuilt)
          logger.info(
            { givingYearsRebuilt },
            'giving years built again for a new fiscal year start',
          );
        return { givingYearsRebuilt };
      }
      const purged = await purgeExpiredReceipts(pool);
      logger.info({ purged }, 'expired idempotency receipts purged');
      const pruned = await pruneEvents(pool, eventRetentionDays);
      logger.info({ pruned }, 'events past their retention pruned');
      const deliveriesPruned = await pruneDeliveries(pool, eventRetentionDays);
      logger.info({ deliveriesPruned }, 'webhook deliveries and attempts past retention pruned');
      const importFilesPruned = await pruneImportFiles(pool, importFileRetentionDays);
      logger.info({ importFilesPruned }, 'import files past their retention emptied');
      const auditPruned = await pruneAudit(pool, auditRetentionDays);
      logger.info({ auditPruned }, 'audit events past their retention pruned');
      const disabled = await disableFailingEndpoints(pool);
      if (disabled) logger.warn({ disabled }, 'webhook endpoints failing for days disabled');
      return { purged, pruned, deliveriesPruned, importFilesPruned, auditPruned, disabled };
    },
    { connection, prefix, concurrency: 1 },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'maintenance worker connection error'));
  return {
    async close() {
      await closeWorker(worker, logger);
      await queue.close();
    },
  };
}
