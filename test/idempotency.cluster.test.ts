import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import {
  acquireLeases,
  extendLeases,
  lockKeyFor,
  newLockToken,
  releaseLeases,
  settleLeases,
} from '../common/idempotency/lock.js';
import { shardPrefixFor } from '../common/queue.js';
import { shardOf } from '../common/queueShards.js';
import { replyWithLeases } from '../common/replies.js';
import { freePort, waitForPort } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';

/**
 * The idempotency scripts on a Redis in cluster mode (one node holding every slot), where Redis
 * refuses a script that touches a key it was not given in a slot other than its own: so they
 * would also run on a cluster of many nodes, next to a queue in any slot (ARCHITECTURE.md,
 * "Scaling out").
 */

let server: ChildProcess;
let dir: string;
let redis: Redis;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dgs-redis-cluster-'));
  const port = await freePort();
  server = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
      ...['--save', '', '--appendonly', 'no'],
    ],
    { stdio: 'ignore' },
  );
  await waitForPort(port);
  redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  await redis.connect();
  await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
  await waitFor(
    async () => String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'),
    10_000,
    'the one-node cluster',
  );
});
afterAll(async () => {
  redis?.disconnect();
  if (server && server.exitCode === null) {
    const gone = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await gone;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the cluster refuses a script that reads a key it was not given (the check the scripts pass)', async () => {
  await expect(
    redis.eval(
      "#!lua\nredis.call('get', KEYS[1])\nreturn redis.call('exists', 'dgm:writes:some-job')",
      1,
      'dgm:idempotency-lock:1:abc',
    ),
  ).rejects.toThrow(/do not hash to the same slot/);
});

test('lease, extension, done marker and release run on a cluster', async () => {
  const key = lockKeyFor({ QUEUE_PREFIX: 'dgm', WRITE_QUEUE_SHARDS: 1 }, 1, 'cluster-key');
  const token = newLockToken('fingerprint', 'req_one');
  const other = newLockToken('other', 'req_two');
  const acquire = async (of: string, trustDone = true) =>
    (await acquireLeases(redis, [{ key, token: of, trustDone }]))[0];
  const settle = (of: string, committed: boolean) =>
    settleLeases(redis, [{ key, token: of, committed }], 300);

  await redis.call('SCRIPT', 'FLUSH');
  expect(await acquire(token)).toEqual({ state: 'acquired' });
  expect(await acquire(other)).toEqual({ state: 'in_flight', holderFingerprint: 'fingerprint' });
  await extendLeases(redis, [{ key, token }], 60_000);
  expect(await redis.pttl(key)).toBeGreaterThan(2_000);
  // A refusal of another request leaves a lease it does not hold alone.
  await settle(other, false);
  expect(await redis.get(key)).toBe(token);

  await settle(token, true);
  expect(await redis.get(key)).toBe('done:fingerprint');
  expect(await redis.ttl(key)).toBeLessThanOrEqual(300);
  expect(await acquire(other)).toEqual({ state: 'done', fingerprint: 'fingerprint' });
  // A marker whose receipt expired is taken over.
  expect(await acquire(other, false)).toEqual({ state: 'acquired' });
  await releaseLeases(redis, [{ key, token }]);
  expect(await redis.get(key)).toBe(other);
  await settle(other, false);
  expect(await redis.exists(key)).toBe(0);
});

test("one call takes, extends and settles the leases of a shard's writes together", async () => {
  // Institutions 1 and 2 on one shard of three: their keys share the shard's slot.
  const settings = { QUEUE_PREFIX: 'dgm', WRITE_QUEUE_SHARDS: 1 };
  const keys = [
    lockKeyFor(settings, 1, 'first'),
    lockKeyFor(settings, 2, 'second'),
    lockKeyFor(settings, 1, 'third'),
  ];
  const tokens = ['a', 'b', 'c'].map((name) => newLockToken(name, `req_${name}`));
  await redis.set(keys[2]!, 'done:c', 'EX', 60);
  const leases = keys.map((key, index) => ({ key, token: tokens[index]!, trustDone: true }));
  // The first key given twice: its second request finds it held by the first.
  const attempts = await acquireLeases(redis, [
    ...leases,
    { key: keys[0]!, token: newLockToken('z', 'req_z'), trustDone: true },
  ]);
  expect(attempts).toEqual([
    { state: 'acquired' },
    { state: 'acquired' },
    { state: 'done', fingerprint: 'c' },
    { state: 'in_flight', holderFingerprint: 'a' },
  ]);
  await extendLeases(redis, leases.slice(0, 2), 60_000);
  for (const key of keys.slice(0, 2)) expect(await redis.pttl(key)).toBeGreaterThan(2_000);
  await settleLeases(
    redis,
    [
      { ...leases[0]!, committed: true },
      { ...leases[1]!, committed: false },
    ],
    300,
  );
  expect(await redis.get(keys[0]!)).toBe('done:a');
  expect(await redis.exists(keys[1]!)).toBe(0);
  expect(await redis.get(keys[2]!)).toBe('done:c');
});

test("the worker's reply goes in the script that settles the keys, in their slot", async () => {
  const settings = { QUEUE_PREFIX: 'dgm', WRITE_QUEUE_SHARDS: 1 };
  const key = lockKeyFor(settings, 1, 'replied');
  const token = newLockToken('replied', 'req_replied');
  const channel = `${shardPrefixFor(settings, 1)}:replies:api-process`;
  await acquireLeases(redis, [{ key, token, trustDone: true }]);
  const subscriber = redis.duplicate();
  const reader = redis.duplicate();
  try {
    // What the key holds at the moment the API process hears its answer.
    const heard: { message: string; key: string | null }[] = [];
    subscriber.on('smessage', (_channel: string, message: string) => {
      void reader.get(key).then((value) => heard.push({ message, key: value }));
    });
    await subscriber.ssubscribe(channel);
    await settleLeases(redis, [{ key, token, committed: true }], 300, {
      channel,
      message: 'the answers',
      command: 'spublish',
    });
    await waitFor(() => heard.length === 1, 2_000, 'the reply');
    expect(heard).toEqual([{ message: 'the answers', key: 'done:replied' }]);

    // A channel in another slot cannot ride with the keys: Redis refuses it and settles nothing.
    const elsewhere = `${shardPrefixFor({ ...settings, WRITE_QUEUE_SHARDS: 3 }, 7)}:replies:x`;
    expect(calculateSlot(elsewhere)).not.toBe(calculateSlot(key));
    await acquireLeases(redis, [{ key, token, trustDone: false }]);
    await expect(
      settleLeases(redis, [{ key, token, committed: true }], 300, {
        channel: elsewhere,
        message: 'lost',
        command: 'spublish',
      }),
    ).rejects.toThrow(/slot/);
    expect(await redis.get(key)).toBe(token);
    await releaseLeases(redis, [{ key, token }]);
  } finally {
    subscriber.disconnect();
    reader.disconnect();
  }
});

test('a reply rides with the keys only where Redis allows it (in their slot, on a cluster) and only when there are keys', () => {
  const settings = { QUEUE_PREFIX: 'dgm', WRITE_QUEUE_SHARDS: 3 };
  const keys = [lockKeyFor(settings, 7, 'a'), lockKeyFor(settings, 7, 'b')];
  const ours = `${shardPrefixFor(settings, 7)}:replies:p`;
  const theirs = `${shardPrefixFor(settings, 8)}:replies:p`;
  // Institutions 7 and 8 are on different shards of three.
  expect(shardOf(8, 3)).not.toBe(shardOf(7, 3));
  expect(calculateSlot(theirs)).not.toBe(calculateSlot(ours));
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  try {
    expect(replyWithLeases(cluster, { channel: ours, message: 'm' }, keys)).toEqual({
      channel: ours,
      message: 'm',
      command: 'spublish',
    });
    expect(replyWithLeases(cluster, { channel: theirs, message: 'm' }, keys)).toBeNull();
    // One server has no slots: any channel goes, by PUBLISH.
    expect(replyWithLeases(redis, { channel: theirs, message: 'm' }, keys)).toEqual({
      channel: theirs,
      message: 'm',
      command: 'publish',
    });
    // Nothing to settle: no script runs, so the reply goes on its own.
    expect(replyWithLeases(redis, { channel: ours, message: 'm' }, [])).toBeNull();
    expect(replyWithLeases(cluster, { channel: ours, message: 'm' }, [])).toBeNull();
  } finally {
    cluster.disconnect();
  }
});
