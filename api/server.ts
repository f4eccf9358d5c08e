import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Config } from '../common/config.js';
import { createDatabasePool } from '../common/db/pool.js';
import type { Logger } from '../common/logger.js';
import { createApiMetrics } from '../common/metrics.js';
import { createWriteQueue } from '../common/queue.js';
import { ReplyInbox } from '../common/replies.js';
import { createRedis, redisOptions } from '../common/redis.js';
import { createApp } from './app.js';
import { RecentKeys } from './recentKeys.js';
import { WriteGateway } from './writeGateway.js';
import { WorkerPresence } from '../common/workerPresence.js';
import { pinToday } from '../common/clock.js';
import { setWebhookPolicy } from '../common/webhooks/policy.js';
import { createDeliveryQueue } from '../common/webhooks/queue.js';

export interface RunningApi {
  server: Server;
  url: string;
  /** Stops taking connections, lets requests in flight finish, then closes every connection. */
  close(): Promise<void>;
}

export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  pinToday(config.CLOCK_TODAY ?? null);
  setWebhookPolicy(config);
  const pool = await createDatabasePool(config.DATABASE_URL, {
    maxPoolSize: config.DATABASE_POOL_SIZE,
    applicationName: 'dgs-api',
  });
  const redis = createRedis(config.REDIS_URL, 'request');
  const queue = createWriteQueue(redisOptions(config.REDIS_URL, 'request'), config.QUEUE_PREFIX);
  // A connection of its own: a subscribed connection takes no other command.
  const replies = new ReplyInbox(createRedis(config.REDIS_URL, 'blocking'), config.QUEUE_PREFIX);
  queue.on('error', (error) => logger.warn({ err: error }, 'queue connection error'));
  // Subscribed before the first job is queued, so no reply can come first.
  await Promise.all([queue.waitUntilReady(), replies.start()]);

  const metrics = createApiMetrics(pool, () =>
    queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
  );
  const recentKeys = new RecentKeys(config.API_KEY_CACHE_SECONDS * 1000);
  const workers = new WorkerPresence(redis, config.QUEUE_PREFIX);
  const gateway = new WriteGateway({
    config,
    metrics,
    pool,
    redis,
    queue,
    replies,
    recentKeys,
    workers,
  });
  const deliveries = createDeliveryQueue(
    redisOptions(config.REDIS_URL, 'request'),
    config.QUEUE_PREFIX,
  );
  deliveries.on('error', (error) => logger.warn({ err: error }, 'webhook queue connection error'));
  const app = createApp({
    deliveries,
    pool,
    recentKeys,
    redis,
    workers,
    gateway,
    logger,
    metrics,
    metricsToken: config.METRICS_TOKEN ?? null,
    rateLimitPerSecond: config.RATE_LIMIT_PER_SECOND,
    admin: config.ADMIN_TOKEN ? { token: config.ADMIN_TOKEN, queue } : null,
    cursors: { secret: config.CURSOR_SECRET, ttlSeconds: config.CURSOR_TTL_SECONDS },
    imports: config,
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
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
      await closed;
      clearInterval(sweep);
      await replies.close();
      await queue.close();
      await deliveries.close();
      redis.disconnect();
      await pool.end();
    },
  };
}
