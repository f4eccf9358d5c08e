import { writeQueueLocations, shardPrefixFor, type QueueSettings } from './queue.js';
import type { Redis } from './redis.js';

/**
 * Whether any worker is running, told by a heartbeat: each worker process writes one key every
 * second that lives a few seconds. The API reads it only when it has not seen it lately, so a
 * busy API pays one Redis read every few seconds, not one per write. A paused worker still beats
 * (it is alive, and takes jobs again when resumed); a dead or frozen one stops.
 *
 * There is one heartbeat key per write queue shard, in the shard's slot: on a cluster, the
 * writes of a shard whose master is down are refused, and the others are not held up by a
 * heartbeat that happened to live on that master.
 */
const HEARTBEAT_MS = 1_000;
/** How long a worker counts as present after its last beat. */
export const WORKER_ABSENT_AFTER_MS = 5_000;
/** How long the API trusts a beat it read before it reads again. */
const TRUSTED_MS = 2_000;

const keyOf = (shardPrefix: string) => `${shardPrefix}:worker-heartbeat`;

/** The heartbeat key the API reads for an institution's writes. */
export const heartbeatKeyFor = (settings: QueueSettings, institutionId: number) =>
  keyOf(shardPrefixFor(settings, institutionId));

/** Every shard's heartbeat key. */
export const heartbeatKeys = (settings: QueueSettings) =>
  writeQueueLocations(settings.QUEUE_PREFIX, settings.WRITE_QUEUE_SHARDS).map(({ prefix }) =>
    keyOf(prefix),
  );

/** Starts a worker's heartbeat on every shard; the returned function stops it. */
export function startHeartbeat(redis: Redis, settings: QueueSettings): () => void {
  const keys = heartbeatKeys(settings);
  const beat = () => {
    const now = String(Date.now());
    for (const key of keys) void redis.set(key, now, 'PX', WORKER_ABSENT_AFTER_MS).catch(() => {});
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The API's view of the workers. */
export class WorkerPresence {
  private readonly seenAt = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly settings: QueueSettings,
  ) {}

  /**
   * Whether a worker has beaten within WORKER_ABSENT_AFTER_MS on the institution's shard;
   * rejects when Redis (that shard's master) fails.
   */
  async present(institutionId: number, now = Date.now()): Promise<boolean> {
    return this.beating(heartbeatKeyFor(this.settings, institutionId), now);
  }

  /** For readiness: a worker beats on some shard (false when none does, or Redis fails). */
  async presentAnywhere(now = Date.now()): Promise<boolean> {
    const checks = heartbeatKeys(this.settings).map((key) =>
      this.beating(key, now).catch(() => false),
    );
    return (await Promise.all(checks)).some(Boolean);
  }

  private async beating(key: string, now: number): Promise<boolean> {
    if (now - (this.seenAt.get(key) ?? 0) < TRUSTED_MS) return true;
    const beat = await this.redis.get(key);
    if (beat === null) return false;
    this.seenAt.set(key, now);
    return true;
  }
}
