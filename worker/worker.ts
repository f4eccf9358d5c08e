import { Worker } from 'bullmq';
import type { Config } from '../common/config.js';
import { createDatabasePool } from '../common/db/pool.js';
import type { Logger } from '../common/logger.js';
import { WRITE_QUEUE } from '../common/queue.js';
import { Redis } from 'ioredis';
import { redisOptions } from '../common/redis.js';
import type { WriteJob, WriteResult } from '../common/commands/runWrite.js';
import { createServer, type Server } from 'node:http';
import { insertWithReceipts } from '../common/idempotency/receipts.js';
import { createWorkerMetrics } from '../common/metrics.js';
import { startHeartbeat } from '../common/workerPresence.js';
import { startMaintenance } from './maintenance.js';
import { startWebhooks } from './webhooks.js';
import { startImports } from './imports.js';
import { GroupCommit } from './groupCommit.js';
import { createProcessor } from './processor.js';
import { pinToday } from '../common/clock.js';
import { setWebhookPolicy } from '../common/webhooks/policy.js';

export interface RunningWorker {
  worker: Worker<WriteJob, WriteResult>;
  /** Takes no new jobs, waits for active ones, closes connections. */
  close(): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  pinToday(config.CLOCK_TODAY ?? null);
  setWebhookPolicy(config);
  const pool = await createDatabasePool(config.DATABASE_URL, {
    // Writes, import chunks, and the sweeps and maintenance beside them.
    maxPoolSize: config.WORKER_CONCURRENCY + config.IMPORT_CONCURRENCY + 2,
    applicationName: 'dgs-worker',
  });
  const metrics = createWorkerMetrics(pool);
  // Settles of the creates of one group commit are sent in one write (ioredis auto-pipelining).
  const redis = new Redis({
    ...redisOptions(config.REDIS_URL, 'blocking'),
    enableAutoPipelining: true,
  });
  redis.on('error', () => {});
  const processor = createProcessor({
    pool,
    redis,
    queuePrefix: config.QUEUE_PREFIX,
    groupCommit: new GroupCommit(
      (items) => insertWithReceipts(pool, items),
      (creates) => metrics.createsPerStatement.observe(creates),
    ),
    metrics,
    logger,
    idempotencyTtlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
  });
  const worker = new Worker<WriteJob, WriteResult>(WRITE_QUEUE, processor, {
    connection: redisOptions(config.REDIS_URL, 'blocking'),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    // A job whose worker died is run again; the write's receipt makes that safe.
    maxStalledCount: 5,
    // A worker that stops renewing its locks (dead, frozen, cut off) loses its jobs to the
    // others after lockDuration; they look for such jobs at the same interval.
    lockDuration: config.WORKER_LOCK_DURATION_MS,
    stalledInterval: config.WORKER_LOCK_DURATION_MS,
  });
  worker.on('error', (error) => logger.warn({ err: error }, 'worker connection error'));
  worker.on('failed', (job, error) => logger.error({ err: error, jobId: job?.id }, 'job failed'));
  await worker.waitUntilReady();
  const stopHeartbeat = startHeartbeat(redis, config.QUEUE_PREFIX);
  const maintenance = await startMaintenance(
    pool,
    redisOptions(config.REDIS_URL, 'blocking'),
    config.QUEUE_PREFIX,
    logger,
    config.EVENT_RETENTION_DAYS,
  );
  const webhooks = await startWebhooks(
    pool,
    redisOptions(config.REDIS_URL, 'blocking'),
    config.QUEUE_PREFIX,
    logger,
  );
  const imports = await startImports(
    pool,
    redisOptions(config.REDIS_URL, 'blocking'),
    config.QUEUE_PREFIX,
    logger,
    { concurrency: config.IMPORT_CONCURRENCY, lockDurationMs: config.WORKER_LOCK_DURATION_MS },
  );
  const metricsServer = config.WORKER_METRICS_PORT
    ? await serveMetrics(config.WORKER_METRICS_PORT, metrics.registry)
    : null;
  logger.info({ concurrency: config.WORKER_CONCURRENCY }, 'worker ready');

  return {
    worker,
    async close() {
      stopHeartbeat();
      await worker.close();
      await maintenance.close();
      await webhooks.close();
      await imports.close();
      redis.disconnect();
      await new Promise((resolve) =>
        metricsServer ? metricsServer.close(resolve) : resolve(undefined),
      );
      await pool.end();
    },
  };
}

/** A worker has no API; when WORKER_METRICS_PORT is set it serves GET /metrics there. */
async function serveMetrics(
  port: number,
  registry: ReturnType<typeof createWorkerMetrics>['registry'],
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
}
