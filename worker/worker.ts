import { Worker } from 'bullmq';
import type { Config } from '../common/config.js';
import { createDatabasePool } from '../common/db/pool.js';
import type { Logger } from '../common/logger.js';
import { WRITE_QUEUE } from '../common/queue.js';
import { createRedis, redisOptions } from '../common/redis.js';
import type { WriteJob, WriteResult } from '../common/commands/runWrite.js';
import { createProcessor } from './processor.js';

export interface RunningWorker {
  worker: Worker<WriteJob, WriteResult>;
  /** Takes no new jobs, waits for active ones, closes connections. */
  close(): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const pool = await createDatabasePool(config.DATABASE_URL, {
    maxPoolSize: config.WORKER_CONCURRENCY + 2,
    applicationName: 'dgs-worker',
  });
  const redis = createRedis(config.REDIS_URL, 'blocking');
  const processor = createProcessor({
    pool,
    redis,
    logger,
    queuePrefix: config.QUEUE_PREFIX,
    idempotencyTtlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
  });
  const worker = new Worker<WriteJob, WriteResult>(WRITE_QUEUE, processor, {
    connection: redisOptions(config.REDIS_URL, 'blocking'),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    // A job whose worker died is run again; the write's receipt makes that safe.
    maxStalledCount: 5,
    lockDuration: 30_000,
  });
  worker.on('error', (error) => logger.warn({ err: error }, 'worker connection error'));
  worker.on('failed', (job, error) => logger.error({ err: error, jobId: job?.id }, 'job failed'));
  await worker.waitUntilReady();
  logger.info({ concurrency: config.WORKER_CONCURRENCY }, 'worker ready');

  return {
    worker,
    async close() {
      await worker.close();
      redis.disconnect();
      await pool.end();
    },
  };
}
