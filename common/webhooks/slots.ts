import type { Redis } from '../redis.js';
import type { DeliveryQueue } from './queue.js';

/**
 * Each institution's share of the delivery workers: at most `limit` of its sends under way at
 * once, across every worker process (the count lives in Redis, beside the queue). A delivery
 * that finds its institution's slots taken is parked (a delayed job, no attempt counted) until
 * one of them frees, so a receiver that hangs holds `limit` sends, never all of them, and the
 * deliveries of other institutions go on (issue: one institution cannot hold another's).
 *
 * A slot is a lease: a worker that dies holding one loses it after `leaseMs`, and the job it was
 * running, run again by another worker, takes the same slot back (it is named after the job).
 */
export interface InstitutionSlots {
  /** Takes a slot for the job; without one, answers false, and with `park` notes the job parked. */
  take(institutionId: number, jobId: string, park: boolean): Promise<boolean>;
  /**
   * Frees the job's slot and, with `wakeParked` (no delivery of this process was waiting for
   * it), wakes the longest parked delivery of the institution, if any.
   */
  free(institutionId: number, jobId: string, wakeParked: boolean): Promise<void>;
  /** Whether the institution has a slot free now (a parked job that missed its wake-up checks). */
  hasRoom(institutionId: number): Promise<boolean>;
}

/** Redis's clock, in ms: the one clock every worker's leases are read against. */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/**
 * KEYS: the institution's slots (job id -> lease end), its parked jobs (job id -> parked at).
 * ARGV: job id, lease (ms), limit, how long an idle parked set is kept (ms), 1 to park the job
 * when no slot is free. Returns 1 with the slot taken, else 0.
 */
const TAKE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
if ARGV[5] == '1' then
  redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 0`;

/** KEYS: the slots. ARGV: job id. */
const FREE = `redis.call('ZREM', KEYS[1], ARGV[1])`;

/** KEYS: the parked jobs. Returns the id of the one parked longest, or false. */
const NEXT = `
local next = redis.call('ZPOPMIN', KEYS[1])
return next[1] or false`;

/** KEYS: the slots. ARGV: limit. Returns 1 when a slot is free. */
const ROOM = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) and 1 or 0`;

/** Parked ids tried per freed slot: some may have run meanwhile (woken by their delay). */
const WAKE_TRIES = 5;

export function institutionSlots(
  redis: Redis,
  queue: DeliveryQueue,
  options: { limit: number; leaseMs: number; parkedForMs: number },
): InstitutionSlots {
  // Under the queue's own prefix: one cluster slot with it, and gone with the queue's keys.
  const keys = (institutionId: number) => ({
    slots: queue.toKey(`slots:${institutionId}`),
    parked: queue.toKey(`parked:${institutionId}`),
  });
  return {
    async take(institutionId, jobId, park) {
      const { slots, parked } = keys(institutionId);
      const taken = await redis.eval(
        TAKE,
        2,
        slots,
        parked,
        jobId,
        options.leaseMs,
        options.limit,
        // Parked jobs wake on their own after parkedForMs at the latest; twice that is idle.
        options.parkedForMs * 2,
        park ? 1 : 0,
      );
      return taken === 1;
    },
    async free(institutionId, jobId, wakeParked) {
      const { slots, parked } = keys(institutionId);
      await redis.eval(FREE, 1, slots, jobId);
      if (!wakeParked) return;
      for (let tries = 0; tries < WAKE_TRIES; tries++) {
        const next = await redis.eval(NEXT, 1, parked);
        if (typeof next !== 'string') return;
        // Only a delayed job can be promoted: one that is running, waiting or gone does not
        // need the wake-up, so the next parked one gets it.
        const job = await queue.getJob(next);
        const promoted = await job?.promote().then(
          () => true,
          () => false,
        );
        if (promoted) return;
      }
    },
    async hasRoom(institutionId) {
      const { slots } = keys(institutionId);
      return (await redis.eval(ROOM, 1, slots, options.limit)) === 1;
    },
  };
}

/**
 * The deliveries of this process waiting for a slot of their institution, woken one at a time as
 * this process frees one (slots freed by other processes are found by looking again).
 */
export class SlotWaiters {
  private readonly waiting = new Map<number, Array<() => void>>();

  /** Resolves when woken, or after `ms`. */
  wait(institutionId: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const queue = this.waiting.get(institutionId) ?? [];
      this.waiting.set(institutionId, queue);
      const done = () => {
        clearTimeout(timer);
        const at = queue.indexOf(done);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiting.get(institutionId) === queue)
          this.waiting.delete(institutionId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      queue.push(done);
    });
  }

  has(institutionId: number): boolean {
    return this.waiting.has(institutionId);
  }

  /** Wakes the delivery of the institution that has waited longest, if any. */
  wake(institutionId: number): void {
    this.waiting.get(institutionId)?.[0]?.();
  }
}
