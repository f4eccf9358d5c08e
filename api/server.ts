import type { AddressInfo, Socket } from 'node:net';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Config } from '../common/config.js';
import { createDatabasePool } from '../common/db/pool.js';
import type { Logger } from '../common/logger.js';
import { createApiMetrics } from '../common/metrics.js';
import { WriteQueues } from '../common/queue.js';
import { ReplyInbox } from '../common/replies.js';
import {
  closeQueueConnection,
  createRedis,
  queueConnection,
  redisTargetOf,
} from '../common/redis.js';
import { readyWithin } from '../common/startupChecks.js';
import { closeParts } from '../common/shutdown.js';
import { createApp } from './app.js';
import { RecentKeys } from './recentKeys.js';
import { probeThrough, RevocationListener } from '../common/auth/revocationListener.js';
import { WriteGateway } from './writeGateway.js';
import { WorkerPresence } from '../common/workerPresence.js';
import { pinToday } from '../common/clock.js';
import { setWebhookPolicy } from '../common/webhooks/policy.js';
import { createDeliveryQueue } from '../common/webhooks/queue.js';
import { createImportQueue } from '../common/imports/queue.js';
import { AuditLog } from '../common/audit/log.js';
import { useSecretsFrom } from '../common/secretsAtRest.js';

export interface RunningApi {
  server: Server;
  url: string;
  /** Stops taking connections, lets requests in flight finish, then closes every connection. */
  close(): Promise<void>;
}

export interface ApiOptions {
  /**
   * The audit log (trust.md §3). Only bench:trust turns it off, in a process of its own, to
   * measure what it costs a write; no setting of the service does.
   */
  audit?: boolean;
}

export async function startApi(
  config: Config,
  logger: Logger,
  options: ApiOptions = {},
): Promise<RunningApi> {
  pinToday(config.CLOCK_TODAY ?? null);
  setWebhookPolicy(config);
  useSecretsFrom(config, logger);
  const pool = await createDatabasePool(config.DATABASE_URL, {
    maxPoolSize: config.DATABASE_POOL_SIZE,
    applicationName: 'dgs-api',
  });
  const readPool = config.DATABASE_READ_URL
    ? await createDatabasePool(config.DATABASE_READ_URL, {
        maxPoolSize: config.DATABASE_POOL_SIZE,
        applicationName: 'dgs-api-read',
      })
    : pool;
  const target = redisTargetOf(config);
  const redis = createRedis(target, 'request');
  const connection = queueConnection(target, 'request');
  const queues = WriteQueues.open(connection, config.QUEUE_PREFIX, config.WRITE_QUEUE_SHARDS);
  // A connection of its own: a subscribed connection takes no other command.
  const replies = new ReplyInbox(
    createRedis(target, 'blocking', {}, { shardedSubscribers: true }),
    config,
  );
  for (const queue of queues.shards)
    queue.on('error', (error) => logger.warn({ err: error }, 'queue connection error'));
  // Subscribed before the first job is queued, so no reply can come first.
  await readyWithin(
    'The write queues and the reply subscription',
    Promise.all([queues.waitUntilReady(), replies.start()]),
  );

  // The webhooks queue, for the metrics and the queue board; the API queues nothing on it.
  const deliveries = createDeliveryQueue(connection, config.QUEUE_PREFIX);
  deliveries.on('error', (error) => logger.warn({ err: error }, 'webhook queue connection error'));
  // The imports queue, for the queue board only: the workers queue its jobs.
  const importQueue = createImportQueue(connection, config.QUEUE_PREFIX);
  importQueue.on('error', (error) => logger.warn({ err: error }, 'imports queue connection error'));
  const metrics = createApiMetrics(
    pool,
    () => queues.counts('waiting', 'active', 'delayed', 'failed'),
    () => deliveries.getJobCounts('waiting', 'delayed'),
  );
  const recentKeys = new RecentKeys(config.API_KEY_CACHE_SECONDS * 1000);
  // LISTEN needs a session of its own: the direct URL when DATABASE_URL is a pooler.
  const revocations = new RevocationListener(
    config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL,
    recentKeys,
    logger,
    probeThrough(pool),
  );
  if (config.API_KEY_CACHE_SECONDS > 0) revocations.start();
  const workers = new WorkerPresence(redis, config);
  const gateway = new WriteGateway({
    config,
    metrics,
    pool,
    redis,
    queues,
    replies,
    recentKeys,
    workers,
  });
  const audit = options.audit === false ? null : new AuditLog(pool, logger);
  const app = createApp({
    audit,
    pool,
    readPool,
    recentKeys,
    redis,
    workers,
    gateway,
    logger,
    metrics,
    metricsToken: config.METRICS_TOKEN ?? null,
    rateLimitPerSecond: config.RATE_LIMIT_PER_SECOND,
    admin: config.ADMIN_TOKEN
      ? {
          token: config.ADMIN_TOKEN,
          queues: queues.shards,
          webhookQueue: deliveries,
          importQueue,
        }
      : null,
    lists: {
      secret: config.CURSOR_SECRET,
      ttlSeconds: config.CURSOR_TTL_SECONDS,
      ranges: {
        walkRows: config.LIST_RANGE_WALK_ROWS,
        sortRows: config.LIST_RANGE_SORT_ROWS,
      },
    },
    imports: config,
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  // Connections that have not sent a request yet (a browser opens some ahead of need). Node
  // counts them neither idle nor closable until headersTimeout (60 s), so a stop closes them.
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  const { port } = server.address() as AddressInfo;
  logger.info({ port }, 'api listening');

  return {
    server,
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response goes out; close them then.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      for (const socket of unused) socket.destroy();
      await closed;
      clearInterval(sweep);
      await closeParts(
        {
          audit: async () => audit?.close(),
          revocations: () => revocations.close(),
          replies: () => replies.close(),
          writes: () => queues.close(),
          webhooks: () => deliveries.close(),
          imports: () => importQueue.close(),
        },
        logger,
      );
      closeQueueConnection(connection);
      redis.disconnect();
      await pool.end();
      if (readPool !== pool) await readPool.end();
    },
  };
}
