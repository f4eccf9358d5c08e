import type { Redis } from './redis.js';

/**
 * Whether any worker is running, told by a heartbeat: each worker process writes one key every
 * second that lives a few seconds. The API reads it only when it has not seen it lately, so a
 * busy API pays one Redis read every few seconds, not one per write. A paused worker still beats
 * (it is alive, and takes jobs again when resumed); a dead or frozen one stops.
 */
const HEARTBEAT_MS = 1_000;
/** How long a worker counts as present after its last beat. */
export const WORKER_ABSENT_AFTER_MS = 5_000;
/** How long the API trusts a beat it read before it reads again. */
const TRUSTED_MS = 2_000;

const keyOf = (prefix: string) => `${prefix}:worker-heartbeat`;

/** Starts a worker's heartbeat; the returned function stops it. */
export function startHeartbeat(redis: Redis, prefix: string): () => void {
  const beat = () =>
    void redis.set(keyOf(prefix), String(Date.now()), 'PX', WORKER_ABSENT_AFTER_MS).catch(() => {});
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The API's view of the workers. */
export class WorkerPresence {
  private seenAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Whether a worker has beaten within WORKER_ABSENT_AFTER_MS; rejects when Redis fails. */
  async present(now = Date.now()): Promise<boolean> {
    if (now - this.seenAt < TRUSTED_MS) return true;
    const beat = await this.redis.get(keyOf(this.prefix));
    if (beat === null) return false;
    this.seenAt = now;
    return true;
  }
}
