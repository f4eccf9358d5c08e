import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from '../redis.js';

/**
 * One Redis key per idempotency key, in one of two states:
 * - in flight: `inflight:<fingerprint>.<nonce>`, a lease held by the request that queued the
 *   write, so a second caller can tell "same request, still running" (409) from "different
 *   request" (422);
 * - done: `done:<fingerprint>`, set by the worker once the write's receipt is committed, so a
 *   retry knows to read the receipt from Postgres without queueing anything.
 * Postgres stays the record: a missing marker (Redis restarted, say) only means the write goes
 * to a worker, whose receipt check replays it.
 */
export const lockKeyFor = (prefix: string, institutionId: number, idempotencyKey: string) =>
  `${prefix}:idempotency-lock:${institutionId}:${createHash('sha256').update(idempotencyKey).digest('base64url')}`;

const IN_FLIGHT = 'inflight:';
const DONE = 'done:';

export const newLockToken = (fingerprint: string) =>
  `${IN_FLIGHT}${fingerprint}.${randomBytes(12).toString('base64url')}`;

export type LockAttempt =
  | { state: 'acquired' }
  | { state: 'in_flight'; holderFingerprint: string }
  | { state: 'done'; fingerprint: string };

/**
 * Takes the lease unless the key is held or (when `trustDone`) marked done. One round trip.
 * `trustDone: false` overwrites a done marker whose receipt Postgres no longer has (expired).
 */
const acquireScript = `
local current = redis.call('get', KEYS[1])
if current and (ARGV[3] == '1' or string.sub(current, 1, 5) ~= 'done:') then return current end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

export async function acquireLock(
  redis: Redis,
  key: string,
  token: string,
  leaseMs: number,
  trustDone = true,
): Promise<LockAttempt> {
  const current = (await redis.eval(
    acquireScript,
    1,
    key,
    token,
    leaseMs,
    trustDone ? '1' : '0',
  )) as string | null;
  if (current === null) return { state: 'acquired' };
  if (current.startsWith(DONE)) return { state: 'done', fingerprint: current.slice(DONE.length) };
  const fingerprint = current.slice(IN_FLIGHT.length, current.lastIndexOf('.'));
  return { state: 'in_flight', holderFingerprint: fingerprint };
}

/** Replaces this token's lease with the done marker (ARGV[2] set) or deletes it (ARGV[2] empty). */
const finishScript = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('del', KEYS[1]) end
redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

/** Deletes the lease only if this token still holds it: the key is free again. */
export async function releaseLock(redis: Redis, key: string, token: string): Promise<void> {
  await redis.eval(finishScript, 1, key, token, '', 0);
}

/**
 * Marks the key done for `ttlSeconds` (at most as long as its receipt lives), if this token
 * still holds the lease (a lease that ran out may already belong to a newer attempt, which will
 * mark it itself).
 */
export async function markDone(
  redis: Redis,
  key: string,
  token: string,
  ttlSeconds: number,
): Promise<void> {
  const fingerprint = token.slice(IN_FLIGHT.length, token.lastIndexOf('.'));
  await redis.eval(finishScript, 1, key, token, `${DONE}${fingerprint}`, ttlSeconds);
}
