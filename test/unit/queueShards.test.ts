/**
 * Where the write queues are: hash-tagged prefixes that keep each queue in one slot, shards whose
 * slots fall on different masters of an evenly split cluster, and a stable shard per institution.
 */
import calculateSlot from 'cluster-key-slot';
import { loadConfig } from '../../common/config.js';
import { lockKeyFor } from '../../common/idempotency/lock.js';
import { writeQueueLocationFor, writeQueueLocations } from '../../common/queue.js';
import { shardOf } from '../../common/queueShards.js';
import { redisTargetOf } from '../../common/redis.js';
import { heartbeatKeyFor } from '../../common/workerPresence.js';

const SLOTS = 16_384;

test('one shard is one queue named writes, under a hash-tagged prefix', () => {
  expect(writeQueueLocations('dgm', 1)).toEqual([{ name: 'writes', prefix: 'dgm:{writes}' }]);
});

test.each([2, 3, 5, 8])(
  'with %i shards, shard i hashes into the i-th part of the slot space',
  (count) => {
    const locations = writeQueueLocations('dgm', count);
    expect(locations.map(({ name }) => name)).toEqual(
      Array.from({ length: count }, (_, index) => `writes-${index}`),
    );
    locations.forEach(({ prefix }, index) => {
      expect(prefix).toMatch(new RegExp(`^dgm:\\{writes-${index}(\\.\\d+)?\\}$`));
      expect(Math.floor((calculateSlot(prefix) * count) / SLOTS)).toBe(index);
    });
  },
);

test('an institution keeps its shard across releases, and institutions spread over all shards', () => {
  // Pinned: a change of the hash would move institutions between queues under running writes.
  expect([1, 2, 3, 4, 5, 6, 7, 8, 1000, 123456].map((id) => shardOf(id, 3))).toEqual([
    1, 1, 1, 2, 1, 1, 1, 2, 0, 2,
  ]);
  expect([1, 2, 3, 4, 5].map((id) => shardOf(id, 8))).toEqual([7, 6, 7, 5, 5]);
  const shards = Array.from({ length: 300 }, (_, index) => shardOf(index + 1, 3));
  for (const shard of [0, 1, 2])
    expect(shards.filter((value) => value === shard).length).toBeGreaterThan(80);
  expect(shardOf(42, 1)).toBe(0);
});

test('an institution’s lease and heartbeat keys are in its queue’s slot', () => {
  const settings = { QUEUE_PREFIX: 'dgm', WRITE_QUEUE_SHARDS: 3 };
  for (const institutionId of [1, 2, 3, 4, 5, 6]) {
    const queueSlot = calculateSlot(writeQueueLocationFor('dgm', 3, institutionId).prefix);
    expect(calculateSlot(lockKeyFor(settings, institutionId, 'key-1'))).toBe(queueSlot);
    expect(calculateSlot(heartbeatKeyFor(settings, institutionId))).toBe(queueSlot);
  }
});

describe('configuration', () => {
  const base = { DATABASE_URL: 'postgres://u@127.0.0.1/db', CURSOR_SECRET: 'x'.repeat(32) };

  test('REDIS_CLUSTER_NODES replaces REDIS_URL', () => {
    const config = loadConfig({
      ...base,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: '127.0.0.1:7101, redis-2.internal:7102',
    });
    expect(redisTargetOf(config)).toEqual({
      cluster: [
        { host: '127.0.0.1', port: 7101 },
        { host: 'redis-2.internal', port: 7102 },
      ],
      nodeOptions: {},
    });
    expect(config.WRITE_QUEUE_SHARDS).toBe(1);
    expect(redisTargetOf(loadConfig({ ...base, REDIS_URL: 'redis://r:6379' }))).toBe(
      'redis://r:6379',
    );
  });

  test("the cluster's credentials and TLS apply to every node", () => {
    const config = loadConfig({
      ...base,
      REDIS_CLUSTER_NODES: 'redis-1.internal:6379',
      REDIS_CLUSTER_USERNAME: 'dgs',
      REDIS_CLUSTER_PASSWORD: 's3cret',
      REDIS_CLUSTER_TLS: 'true',
    });
    expect(redisTargetOf(config)).toEqual({
      cluster: [{ host: 'redis-1.internal', port: 6379 }],
      nodeOptions: { username: 'dgs', password: 's3cret', tls: {} },
    });
  });

  test.each([
    [{}, 'Invalid configuration: REDIS_URL is required'],
    [
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_CLUSTER_TLS: 'yes' },
      'Invalid configuration: REDIS_CLUSTER_TLS must be true or false',
    ],
    [
      { REDIS_CLUSTER_NODES: '127.0.0.1' },
      'Invalid configuration: REDIS_CLUSTER_NODES must be host:port pairs, comma-separated',
    ],
    [
      { REDIS_URL: 'redis://r:6379', WRITE_QUEUE_SHARDS: '0' },
      'Invalid configuration: WRITE_QUEUE_SHARDS',
    ],
  ])('%j is refused with one line naming the variable', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
