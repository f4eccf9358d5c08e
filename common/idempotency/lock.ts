import { createHash, hash } from 'node:crypto';
import { shardPrefixFor, type QueueSettings } from '../queue.js';
import type { Redis } from '../redis.js';

/**
 * One Redis key per idempotency key, owned by this project, in one of two states:
 * - in flight: `inflight:<fingerprint>.<job id>`, a lease taken by the request that queues the
 *   write, so that a second caller can tell "same request, still running" (409) from "different
 *   request" (422);
 * - done: `done:<fingerprint>`, written by the worker once the write committed, so that a retry
 *   reads the receipt from Postgres and queues nothing.
 *
 * Every script touches only the key it is given (KEYS[1]), so the scripts work on Redis Cluster,
 * where the key lives in the slot of its institution's write queue (common/queue.ts), and
 * nothing here reads BullMQ's own keys: BullMQ may trim or lose a job without changing what
 * a key means.
 *
 * The life of a lease:
 * 1. The API takes it for LEASE_UNTIL_QUEUED_MS (acquireLock). An API process that dies before
 *    its job is queued leaves the key held for at most that long.
 * 2. When the API has been waiting EXTEND_AFTER_MS for a queued job, or answers 504, it extends
 *    the lease to leaseAfterQueuedMs (extendLock), so that a retry of a write that waits in a
 *    backlog or outlived its 504 is still told 409 rather than queueing a second job. Most
 *    writes finish sooner, so this costs them nothing.
 * 3. The worker settles it (settleLock) before its job completes: the done marker after a
 *    commit (or a replay), deleted after a refusal or a failure (if still its lease). The API
 *    frees it itself when the job was not queued.
 *
 * Postgres stays the record: a lease that ran out, or a marker Redis lost, only sends a retry to
 * a worker, whose receipt check replays the write (or refuses a different body as a mismatch).
 */
export const lockKeyFor = (
  settings: QueueSettings,
  institutionId: number,
  idempotencyKey: string,
) =>
  `${shardPrefixFor(settings, institutionId)}:idempotency-lock:${institutionId}:${hash('sha256', idempotencyKey, 'base64url')}`;

const IN_FLIGHT = 'inflight:';
const DONE = 'done:';

/** How long a new lease holds the key before its job is known to be queued. */
export const LEASE_UNTIL_QUEUED_MS = 2_000;
/** How long the API waits for a queued job before it extends the lease (under the lease above). */
export const EXTEND_AFTER_MS = 1_000;
/** The extended lease: it outlives the API's wait, so that it still holds after a 504. */
export const leaseAfterQueuedMs = (writeTimeoutMs: number) => writeTimeoutMs * 3;

/**
 * How long a done marker lasts: the writes of the last few minutes, to bound Redis memory, and
 * never longer than the receipt it stands for. A retry after it still replays, through a worker.
 */
export const DONE_MARKER_SECONDS = 300;
export const doneMarkerSeconds = (idempotencyTtlSeconds: number) =>
  Math.min(idempotencyTtlSeconds, DONE_MARKER_SECONDS);

/** The lease of the request whose job is `jobId` (the fingerprint holds no dot). */
export const newLockToken = (fingerprint: string, jobId: string) =>
  `${IN_FLIGHT}${fingerprint}.${jobId}`;

export type LockAttempt =
  | { state: 'acquired' }
  | { state: 'in_flight'; holderFingerprint: string }
  | { state: 'done'; fingerprint: string };

/**
 * A Lua script run by EVALSHA, with EVAL when Redis does not have it (yet, or any more). The
 * `#!lua` line (Redis 7) makes Redis refuse, on a cluster, any key the script was not given.
 */
class Script {
  private readonly lua: string;
  private readonly sha: string;

  constructor(body: string) {
    this.lua = `#!lua\n${body}`;
    this.sha = createHash('sha1').update(this.lua).digest('hex');
  }

  async run(redis: Redis, key: string, ...args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, 1, key, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, 1, key, ...args);
    }
  }
}

/**
 * Takes the lease unless the key is held or (ARGV[3] = '1') done; returns what holds it.
 * `trustDone: false` overwrites a done marker whose receipt Postgres no longer has (expired).
 */
const acquireScript = new Script(`
local current = redis.call('get', KEYS[1])
if current and (ARGV[3] == '1' or string.sub(current, 1, 5) ~= 'done:') then return current end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`);

/** One round trip. */
export async function acquireLock(
  redis: Redis,
  key: string,
  token: string,
  trustDone = true,
): Promise<LockAttempt> {
  const current = (await acquireScript.run(
    redis,
    key,
    token,
    LEASE_UNTIL_QUEUED_MS,
    trustDone ? '1' : '0',
  )) as string | null;
  if (current === null) return { state: 'acquired' };
  if (current.startsWith(DONE)) return { state: 'done', fingerprint: current.slice(DONE.length) };
  const fingerprint = current.slice(IN_FLIGHT.length, current.indexOf('.'));
  return { state: 'in_flight', holderFingerprint: fingerprint };
}

/** Gives this token's lease `ARGV[2]` ms more, if the token still holds it. */
const extendScript = new Script(`
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('pexpire', KEYS[1], ARGV[2])`);

export async function extendLock(
  redis: Redis,
  key: string,
  token: string,
  leaseMs: number,
): Promise<void> {
  await extendScript.run(redis, key, token, leaseMs);
}

/** Deletes the lease only if this token still holds it: the key is free again. */
const releaseScript = new Script(`
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('del', KEYS[1])`);

export async function releaseLock(redis: Redis, key: string, token: string): Promise<void> {
  await releaseScript.run(redis, key, token);
}

/**
 * The worker's one round trip once a keyed write has its outcome. `committed` (a commit, or a
 * replay of one) makes the key done for `doneSeconds`, whoever holds its lease: Postgres now holds
 * the receipt, so done is true of the key from now on, and a plain SET costs Redis less than a
 * script. Otherwise (refused, failed) this token's lease is deleted, freeing the key for a
 * corrected retry; a lease that ran out and was taken by a newer request is left to that request.
 */
export async function settleLock(
  redis: Redis,
  key: string,
  token: string,
  committed: boolean,
  doneSeconds: number,
): Promise<void> {
  if (committed) {
    await redis.set(
      key,
      `${DONE}${token.slice(IN_FLIGHT.length, token.indexOf('.'))}`,
      'EX',
      doneSeconds,
    );
  } else {
    await releaseLock(redis, key, token);
  }
}
