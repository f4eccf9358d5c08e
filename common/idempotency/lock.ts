import { createHash } from 'node:crypto';
import type { Redis } from '../redis.js';

/**
 * One Redis key per idempotency key, in one of two states:
 * - in flight: `inflight:<fingerprint>.<job id>`, a lease taken by the request that queues the
 *   write, naming its job, so that a second caller can tell "same request, still running" (409)
 *   from "different request" (422);
 * - done: `done:<fingerprint>`, so that a retry reads the receipt from Postgres and queues
 *   nothing.
 * Nobody has to come back to settle a lease: the next caller looks at the job it names. A job
 * that committed makes the key done; one that was refused or failed frees it; a job that is no
 * longer in Redis (trimmed after it finished, or never queued because its request died) frees it
 * too once the lease is a second old (younger, the job may still be on its way in). So the worker
 * needs no round trip to Redis of its own. Postgres stays the record: a freed key or a lost marker
 * only sends a retry to a worker, whose receipt check replays the write.
 */
export const lockKeyFor = (prefix: string, institutionId: number, idempotencyKey: string) =>
  `${prefix}:idempotency-lock:${institutionId}:${createHash('sha256').update(idempotencyKey).digest('base64url')}`;

const IN_FLIGHT = 'inflight:';
const DONE = 'done:';

/** The lease of the request whose job is `jobId` (neither part holds a dot). */
export const newLockToken = (fingerprint: string, jobId: string) =>
  `${IN_FLIGHT}${fingerprint}.${jobId}`;

export type LockAttempt =
  | { state: 'acquired' }
  | { state: 'in_flight'; holderFingerprint: string }
  | { state: 'done'; fingerprint: string };

export interface LockSettings {
  leaseMs: number;
  /** The Redis key of a write job without its id: BullMQ's `<prefix>:<queue>:`. */
  jobKeyPrefix: string;
  /** How long a done marker lasts. */
  doneSeconds: number;
}

/** How old a lease must be before a missing job means the job is gone rather than coming. */
const JOB_ARRIVAL_MS = 1_000;

/**
 * Takes the lease unless the key is held or (when `trustDone`) done, after settling a lease as
 * described above. One round trip. `trustDone: false` overwrites a done marker whose receipt
 * Postgres no longer has (expired). The job's key is read although it is not among KEYS: the
 * lease names it, and BullMQ's keys live on the same Redis.
 */
const acquireScript = `
local current = redis.call('get', KEYS[1])
if current and string.sub(current, 1, 9) == 'inflight:' then
  local dot = string.find(current, '.', 10, true)
  local jobKey = ARGV[4] .. string.sub(current, dot + 1)
  local job = redis.call('hmget', jobKey, 'finishedOn', 'returnvalue')
  if job[1] then
    local decoded, result = pcall(cjson.decode, job[2] or 'null')
    if decoded and type(result) == 'table' and result.ok == true then
      current = 'done:' .. string.sub(current, 10, dot - 1)
      redis.call('set', KEYS[1], current, 'EX', ARGV[5])
    else
      current = false
    end
  elseif redis.call('exists', jobKey) == 0
    and tonumber(ARGV[2]) - redis.call('pttl', KEYS[1]) > tonumber(ARGV[6]) then
    current = false
  end
end
if current and (ARGV[3] == '1' or string.sub(current, 1, 5) ~= 'done:') then return current end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

export async function acquireLock(
  redis: Redis,
  key: string,
  token: string,
  settings: LockSettings,
  trustDone = true,
): Promise<LockAttempt> {
  const current = (await redis.eval(
    acquireScript,
    1,
    key,
    token,
    settings.leaseMs,
    trustDone ? '1' : '0',
    settings.jobKeyPrefix,
    settings.doneSeconds,
    JOB_ARRIVAL_MS,
  )) as string | null;
  if (current === null) return { state: 'acquired' };
  if (current.startsWith(DONE)) return { state: 'done', fingerprint: current.slice(DONE.length) };
  const fingerprint = current.slice(IN_FLIGHT.length, current.indexOf('.'));
  return { state: 'in_flight', holderFingerprint: fingerprint };
}

const releaseScript = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('del', KEYS[1])`;

/** Deletes the lease only if this token still holds it: the key is free again. */
export async function releaseLock(redis: Redis, key: string, token: string): Promise<void> {
  await redis.eval(releaseScript, 1, key, token);
}
