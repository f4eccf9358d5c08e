import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/** ioredis options narrowed so that BullMQ accepts them too. */
export type RedisSettings = Omit<RedisOptions, 'retryStrategy'> & {
  retryStrategy: (attempt: number) => number;
};

/**
 * `request`: the API's connection for locks and enqueueing; it fails at once while Redis is
 * down so that the API answers 503 instead of queueing commands in memory.
 * `blocking`: workers and queue-event listeners; BullMQ requires they retry forever.
 */
export function redisOptions(url: string, role: 'request' | 'blocking'): RedisSettings {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  const base: RedisSettings = {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return role === 'request'
    ? { ...base, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000 }
    : { ...base, maxRetriesPerRequest: null };
}

export function createRedis(url: string, role: 'request' | 'blocking'): Redis {
  const redis = new Redis(redisOptions(url, role));
  // Errors surface on the commands that fail; the connection keeps retrying by itself.
  redis.on('error', () => {});
  return redis;
}

/** Resolves once the connection is ready (or immediately if it already is). */
export function redisReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => redis.once('ready', () => resolve()));
}
