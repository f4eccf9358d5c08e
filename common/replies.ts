import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import type { LeaseReply } from './idempotency/lock.js';
import type { WriteResult } from './commands/writeResult.js';
import { writeQueueLocations, type QueueSettings } from './queue.js';
import type { Redis } from './redis.js';

/**
 * A write's outcome goes to the API process that waits for it, and to no other. Each API process
 * subscribes to channels of its own, one per write shard; a job (the writes the process queued
 * together for one shard) names the process's channel in that shard (`replyTo`), and the worker
 * publishes the outcomes of the job's writes there, in one message, from the same script that
 * settles their idempotency keys, so each key is done before its API process can answer. No API
 * process reads the outcomes of writes it does not wait for, so adding API processes adds no
 * cost to anyone's writes.
 *
 * On a Redis Cluster the channels are sharded (SSUBSCRIBE/SPUBLISH, Redis 7) and each is in the
 * slot of its shard's queue: a reply stays on the master that holds the write's queue and
 * idempotency keys, rather than crossing the cluster bus to every master as a plain PUBLISH
 * does. Losing a master loses only its own shard's replies, whose writes have stopped anyway.
 *
 * Delivery is at most once: a reply to a process that is gone, or whose subscription was down at
 * that moment, is lost. Its waiter then answers 504, and the retry with the same key replays the
 * write (its receipt and done marker say it happened), exactly as after any other 504.
 */
export type Reply =
  { requestId: string; result: WriteResult } | { requestId: string; failed: string };

export interface ResultWatch {
  /** The job's outcome, or 'timeout' after `ttlMs`; rejects if the job failed. */
  result: Promise<WriteResult | 'timeout'>;
  /** Stops waiting (the job was never queued). */
  cancel(): void;
}

/** A job's answer: the JSON of its replies (see sendReplies), and the channel it goes to. */
export type JobReply = Omit<LeaseReply, 'command'>;

/** Replies are sharded on a cluster (the channel stays on its slot's master), plain otherwise. */
const publishCommandOf = (redis: Redis): LeaseReply['command'] =>
  redis instanceof Cluster ? 'spublish' : 'publish';

/**
 * Sends the outcomes of a job's writes to their waiter, one message for the job; never fails the
 * job (a lost reply ends in a 504). `message` is the JSON of the replies: a list of Reply (or,
 * for a job of one write queued by an API process of an earlier release, that release's one
 * reply).
 */
export function sendReplies(redis: Redis, { channel, message }: JobReply): void {
  const sent =
    publishCommandOf(redis) === 'spublish'
      ? redis.spublish(channel, message)
      : redis.publish(channel, message);
  void sent.catch(() => {});
}

/**
 * The reply as the last step of the script that settles the job's idempotency leases
 * (settleLeases), so that the keys are settled when the reply is heard, with no round trip
 * between the two; null when it cannot go with them and is sent on its own: there are no keys
 * to settle, or, on a cluster, the channel is outside the keys' slot (an API process and a
 * worker that disagree on WRITE_QUEUE_SHARDS).
 */
export function replyWithLeases(
  redis: Redis,
  reply: JobReply,
  leaseKeys: readonly string[],
): LeaseReply | null {
  if (leaseKeys.length === 0) return null;
  const command = publishCommandOf(redis);
  if (command === 'spublish') {
    const slot = calculateSlot(reply.channel);
    if (leaseKeys.some((key) => calculateSlot(key) !== slot)) return null;
  }
  return { ...reply, command };
}

/** One API process's replies: its channels, and the requests waiting on them. */
export class ReplyInbox {
  private readonly id = randomUUID();
  /** This process's channel in each write shard, by shard index. */
  private readonly channels: readonly string[];
  private readonly waiters = new Map<string, (reply: Reply) => void>();

  /**
   * `subscriber` is a connection of its own (a subscribed connection takes no other command); on
   * a cluster, one made with `shardedSubscribers`.
   */
  constructor(
    private readonly subscriber: Redis,
    settings: QueueSettings,
  ) {
    this.channels = writeQueueLocations(settings.QUEUE_PREFIX, settings.WRITE_QUEUE_SHARDS).map(
      ({ prefix }) => `${prefix}:replies:${this.id}`,
    );
    const ours = new Set(this.channels);
    subscriber.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) => {
      if (!ours.has(channel)) return;
      for (const reply of JSON.parse(message) as Reply[])
        this.waiters.get(reply.requestId)?.(reply);
    });
  }

  private get sharded(): boolean {
    return this.subscriber instanceof Cluster;
  }

  /** Where the worker answers the writes of a shard's jobs: this process's channel there. */
  channelFor(shard: number): string {
    return this.channels[shard]!;
  }

  /**
   * Subscribes (one channel at a time: on a cluster, the channels are in different slots); the
   * connection resubscribes by itself after a reconnect.
   */
  async start(): Promise<void> {
    await Promise.all(
      this.channels.map((channel) =>
        this.sharded ? this.subscriber.ssubscribe(channel) : this.subscriber.subscribe(channel),
      ),
    );
  }

  /** Waits for one write's outcome. Call it before adding its job, so no reply can come first. */
  watch(requestId: string, ttlMs: number): ResultWatch {
    let settle: (done: () => void) => void = () => {};
    const result = new Promise<WriteResult | 'timeout'>((resolve, reject) => {
      let settled = false;
      settle = (done) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiters.delete(requestId);
        done();
      };
      const timer = setTimeout(() => settle(() => resolve('timeout')), ttlMs);
      this.waiters.set(requestId, (reply) =>
        settle(() => ('result' in reply ? resolve(reply.result) : reject(new Error(reply.failed)))),
      );
    });
    return { result, cancel: () => settle(() => {}) };
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
  }
}
