import { Worker } from 'bullmq';
import type { Config } from '../common/config.js';
import { createDatabasePool } from '../common/db/pool.js';
import type { Logger } from '../common/logger.js';
import {
  stalledCheckIntervalMs,
  writeQueueLocations,
  type WriteQueueJob,
  type WriteQueueResult,
} from '../common/queue.js';
import {
  closeQueueConnection,
  createRedis,
  queueConnection,
  redisTargetOf,
} from '../common/redis.js';
import { readyWithin, StartupError } from '../common/startupChecks.js';
import { SecretsError } from '../common/secrets.js';
import { resealStoredSecrets, useSecretsFrom } from '../common/secretsAtRest.js';
import { createServer, type Server } from 'node:http';
import { insertWithReceipts } from '../common/idempotency/receipts.js';
import { createWorkerMetrics } from '../common/metrics.js';
import { startHeartbeat } from '../common/workerPresence.js';
import { startMaintenance } from './maintenance.js';
import { startWebhooks } from './webhooks.js';
import { startImports } from './imports.js';
import { startStatementRuns } from './statementRuns.js';
import { GroupCommit } from './groupCommit.js';
import { createProcessor } from './processor.js';
import { pinToday } from '../common/clock.js';
import { setWebhookPolicy } from '../common/webhooks/policy.js';
import { closeParts, closeWorker } from '../common/shutdown.js';
import { PreparedStatements } from '../common/db/preparedStatements.js';

/** The consumers of the write queues, one per shard (WRITE_QUEUE_SHARDS). */
export class WriteWorkers {
  constructor(readonly shards: readonly Worker<WriteQueueJob, WriteQueueResult>[]) {}

  /** Takes no new job from any shard until resumed (jobs already taken finish). */
  async pause(): Promise<void> {
    await Promise.all(this.shards.map((worker) => worker.pause()));
  }

  resume(): void {
    for (const worker of this.shards) worker.resume();
  }

  async close(logger: Logger): Promise<void> {
    await Promise.all(this.shards.map((worker) => closeWorker(worker, logger)));
  }
}

export interface RunningWorker {
  worker: WriteWorkers;
  /** Takes no new jobs, waits for active ones, closes connections. */
  close(): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  pinToday(config.CLOCK_TODAY ?? null);
  setWebhookPolicy(config);
  const target = redisTargetOf(config);
  const locations = writeQueueLocations(config.QUEUE_PREFIX, config.WRITE_QUEUE_SHARDS);
  // Each shard takes up to WORKER_CONCURRENCY jobs, so one busy institution is served as fast as
  // with one queue; the pool still bounds Postgres to WORKER_CONCURRENCY transactions (plus
  // two for housekeeping and webhooks), and jobs beyond that wait for a connection. No job holds
  // a connection while it waits for another (group commit takes its own), so waiting is safe.
  const pool = await createDatabasePool(config.DATABASE_URL, {
    // Writes, import chunks, and the sweeps and maintenance beside them.
    maxPoolSize: config.WORKER_CONCURRENCY + config.IMPORT_CONCURRENCY + 2,
    applicationName: 'dgs-worker',
  });
  useSecretsFrom(config, logger);
  const resealed = await resealStoredSecrets(pool).catch(async (error: unknown) => {
    await pool.end();
    // A value no configured key opens: SECRETS_KEY_PREVIOUS is missing or was dropped too soon.
    if (error instanceof SecretsError)
      throw new StartupError(`${error.message}: set it as SECRETS_KEY_PREVIOUS.`);
    throw error;
  });
  if (resealed) logger.info({ resealed }, 'sealed stored secrets under the current SECRETS_KEY');
  const metrics = createWorkerMetrics(pool);
  const statements = new PreparedStatements(config.DATABASE_PREPARED_STATEMENTS, logger);
  // Settles of the creates of one group commit are sent in one write (ioredis auto-pipelining).
  const redis = createRedis(target, 'blocking', { enableAutoPipelining: true });
  const processor = createProcessor({
    pool,
    redis,
    queues: config,
    groupCommit: new GroupCommit(
      (items) => statements.run((prepared) => insertWithReceipts(pool, items, { prepared })),
      (creates) => metrics.createsPerStatement.observe(creates),
    ),
    metrics,
    logger,
    idempotencyTtlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
  });
  // On a cluster, BullMQ shares this client among the queues and duplicates it for each
  // blocking connection; on one server it opens connections from these options.
  const connection = queueConnection(target, 'blocking');
  const worker = new WriteWorkers(
    locations.map(({ name, prefix }) => {
      const shard = new Worker<WriteQueueJob, WriteQueueResult>(name, processor, {
        connection,
        prefix,
        concurrency: config.WORKER_CONCURRENCY,
        // A job whose worker died is run again; the write's receipt makes that safe.
        maxStalledCount: 5,
        // A worker that stops renewing its locks (dead, frozen, cut off) loses its jobs to the
        // others after lockDuration, and at most one check interval more.
        lockDuration: config.WORKER_LOCK_DURATION_MS,
        stalledInterval: stalledCheckIntervalMs(config.WORKER_LOCK_DURATION_MS),
      });
      shard.on('error', (error) =>
        logger.warn({ err: error, queue: name }, 'worker connection error'),
      );
      shard.on('failed', (job, error) =>
        logger.error({ err: error, jobId: job?.id, queue: name }, 'job failed'),
      );
      return shard;
    }),
  );
  await readyWithin(
    "The write queues' workers",
    Promise.all(worker.shards.map((shard) => shard.waitUntilReady())),
  );
  const stopHeartbeat = startHeartbeat(redis, config);
  const maintenance = await startMaintenance(pool, connection, config.QUEUE_PREFIX, logger, {
    eventRetentionDays: config.EVENT_RETENTION_DAYS,
    importFileRetentionDays: config.IMPORT_FILE_RETENTION_DAYS,
    auditRetentionDays: config.AUDIT_RETENTION_DAYS,
  });
  const webhooks = await startWebhooks(
    pool,
    connection,
    config.QUEUE_PREFIX,
    logger,
    {
      lockDurationMs: config.WORKER_LOCK_DURATION_MS,
      perInstitution: config.WEBHOOK_INSTITUTION_SENDS,
      parkedForMs: config.WEBHOOK_PARKED_MS,
      redis,
    },
    metrics,
  );
  const imports = await startImports(pool, connection, config.QUEUE_PREFIX, logger, metrics, {
    concurrency: config.IMPORT_CONCURRENCY,
    lockDurationMs: config.WORKER_LOCK_DURATION_MS,
  });
  const statementRuns = startStatementRuns(pool, logger, config.STATEMENT_RUN_BATCH);
  const metricsServer = config.WORKER_METRICS_PORT
    ? await serveMetrics(config.WORKER_METRICS_PORT, metrics.registry)
    : null;
  logger.info(
    { concurrency: config.WORKER_CONCURRENCY, queues: locations.map(({ name }) => name) },
    'worker ready',
  );

  return {
    worker,
    async close() {
      stopHeartbeat();
      await closeParts(
        {
          writes: () => worker.close(logger),
          maintenance: () => maintenance.close(),
          webhooks: () => webhooks.close(),
          imports: () => imports.close(),
          statementRuns: () => statementRuns.close(),
        },
        logger,
      );
      closeQueueConnection(connection);
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
