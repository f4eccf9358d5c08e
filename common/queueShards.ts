import calculateSlot from 'cluster-key-slot';

/** Redis Cluster's slot count. */
const SLOTS = 16_384;

/**
 * Where a BullMQ queue's keys live: its name, and the prefix BullMQ puts before the name. The
 * prefix is the deployment's QUEUE_PREFIX and a hash tag (`dgm:{writes-0}`), so every key of one
 * queue is in one cluster slot, as BullMQ's scripts require, and every key of the deployment
 * still starts with QUEUE_PREFIX (an operator's `SCAN MATCH dgm:*` finds them all).
 */
export interface QueueLocation {
  name: string;
  prefix: string;
}

/** A queue that is not sharded (webhooks, maintenance, writes with one shard). */
export const queueLocation = (queuePrefix: string, name: string): QueueLocation => ({
  name,
  prefix: `${queuePrefix}:{${name}}`,
});

/**
 * Shard `index` of `count`: queue `<name>-<index>`, with a hash tag whose slot lies in the
 * index-th count-th of the slot space (`writes-1`, or `writes-1.k` for the first k that lands
 * there). `redis-cli --cluster create` gives each of M masters an equal run of slots, so with
 * count = M each shard's queue is on a master of its own, instead of wherever its name hashes.
 */
export function shardLocation(
  queuePrefix: string,
  name: string,
  index: number,
  count: number,
): QueueLocation {
  const shardName = `${name}-${index}`;
  for (let salt = 0; ; salt++) {
    const tag = salt === 0 ? shardName : `${shardName}.${salt}`;
    if (Math.floor((calculateSlot(tag) * count) / SLOTS) === index)
      return { name: shardName, prefix: `${queuePrefix}:{${tag}}` };
  }
}

/**
 * An institution's shard: a stable mix of its id (murmur3's finaliser), so that tenants spread
 * evenly whatever their ids, and every write of one institution goes to one queue.
 */
export function shardOf(institutionId: number, count: number): number {
  if (count === 1) return 0;
  let h = institutionId | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % count;
}
