import { Cluster, Redis as SingleRedis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';

/** A connection to the one Redis, or to a Redis Cluster: the commands we send work on either. */
export type Redis = SingleRedis | Cluster;

/** ioredis options narrowed so that BullMQ accepts them too. */
export type RedisSettings = Omit<RedisOptions, 'retryStrategy'> & {
  retryStrategy: (attempt: number) => number;
};

export interface ClusterNode {
  host: string;
  port: number;
}

/**
 * Where Redis is: `REDIS_URL` (one server), or `REDIS_CLUSTER_NODES` (a Redis Cluster, given by
 * some of its nodes; the client learns the rest from them), which wins when both are set.
 */
export type RedisTarget = string | ClusterTarget;

export interface ClusterTarget {
  cluster: ClusterNode[];
  /** How every node is reached: credentials and TLS, the same for all. */
  nodeOptions: Pick<RedisOptions, 'username' | 'password' | 'tls'>;
}

export type RedisRole = 'request' | 'blocking';

/** The target a configuration names. */
export function redisTargetOf(config: {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES: readonly ClusterNode[];
  REDIS_CLUSTER_USERNAME?: string | undefined;
  REDIS_CLUSTER_PASSWORD?: string | undefined;
  REDIS_CLUSTER_TLS?: boolean;
}): RedisTarget {
  if (config.REDIS_CLUSTER_NODES.length)
    return {
      cluster: [...config.REDIS_CLUSTER_NODES],
      nodeOptions: {
        ...(config.REDIS_CLUSTER_USERNAME ? { username: config.REDIS_CLUSTER_USERNAME } : {}),
        ...(config.REDIS_CLUSTER_PASSWORD ? { password: config.REDIS_CLUSTER_PASSWORD } : {}),
        ...(config.REDIS_CLUSTER_TLS ? { tls: {} } : {}),
      },
    };
  if (!config.REDIS_URL) throw new Error('REDIS_URL or REDIS_CLUSTER_NODES must be set');
  return config.REDIS_URL;
}

/** For logs and messages: where the target is, without credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  if (typeof target !== 'string')
    return `cluster ${target.cluster.map((node) => `${node.host}:${node.port}`).join(',')}`;
  const url = new URL(target);
  return `${url.hostname}:${url.port || '6379'}`;
}

/**
 * `request`: the API's connection for locks and enqueueing; it fails at once while Redis is
 * down so that the API answers 503 instead of queueing commands in memory.
 * `blocking`: workers and queue-event listeners; BullMQ requires they retry forever.
 */
export function redisOptions(url: string, role: RedisRole): RedisSettings {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    ...roleOptions(role),
  };
}

function roleOptions(role: RedisRole): RedisSettings {
  const base: RedisSettings = {
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  };
  return role === 'request'
    ? { ...base, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000 }
    : { ...base, maxRetriesPerRequest: null };
}

/**
 * A cluster client with the role's per-node options. A `request` client does not hold commands
 * while the cluster is unreachable or a slot has no master (the API answers 503); a `blocking`
 * one waits for the cluster to come back, as BullMQ's workers need.
 */
function createCluster(
  target: ClusterTarget,
  role: RedisRole,
  extra: RedisOptions,
  clusterExtra: ClusterOptions,
): Cluster {
  const { retryStrategy: _perNode, ...perNode } = roleOptions(role);
  return new Cluster(target.cluster, {
    ...clusterExtra,
    redisOptions: { ...perNode, ...target.nodeOptions, ...extra },
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    enableOfflineQueue: role !== 'request',
    // A command for a slot whose master is unreachable is tried again every 100 ms while the
    // client refreshes its slot map, at most 16 times (maxRedirections), then fails: the API
    // answers 503, a worker logs it (a lease it could not settle runs out by itself).
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    slotsRefreshTimeout: 1_000,
  });
}

/** `clusterExtra` applies only on a cluster (e.g. `shardedSubscribers` for sharded pub/sub). */
export function createRedis(
  target: RedisTarget,
  role: RedisRole,
  extra: RedisOptions = {},
  clusterExtra: ClusterOptions = {},
): Redis {
  const redis =
    typeof target === 'string'
      ? new SingleRedis({ ...redisOptions(target, role), ...extra })
      : createCluster(target, role, extra, clusterExtra);
  // Errors surface on the commands that fail; the connection keeps retrying by itself.
  redis.on('error', () => {});
  return redis;
}

/**
 * A BullMQ `connection` for the target. BullMQ opens (and closes) its own connections from
 * options for one server; for a cluster it needs a client, which it shares and never closes:
 * the caller closes it with `closeQueueConnection` after the queue or worker.
 */
export function queueConnection(target: RedisTarget, role: RedisRole): ConnectionOptions {
  return typeof target === 'string' ? redisOptions(target, role) : createRedis(target, role);
}

export function closeQueueConnection(connection: ConnectionOptions): void {
  if (connection instanceof Cluster || connection instanceof SingleRedis) connection.disconnect();
}

/** Resolves once the connection is ready (or immediately if it already is). */
export function redisReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => redis.once('ready', () => resolve()));
}

/** The master connections a key scan must visit: the one server, or every cluster master. */
function scanTargets(redis: Redis): SingleRedis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * Deletes every key matching `pattern` (SCAN on each master; on a cluster one DEL per key, since
 * the keys of one scan may live in different slots).
 */
export async function deleteMatching(redis: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  for (const node of scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (!keys.length) continue;
      if (redis instanceof Cluster) for (const key of keys) deleted += await redis.del(key);
      else deleted += await redis.del(...keys);
    } while (cursor !== '0');
  }
  return deleted;
}
