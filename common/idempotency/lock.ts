import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from '../redis.js';

/**
 * The in-flight lock for an idempotency key: `SET NX PX`, holding the request fingerprint so a
 * second caller can tell "same request, still running" (409) from "different request" (422).
 */
export const lockKeyFor = (prefix: string, institutionId: number, idempotencyKey: string) =>
  `${prefix}:idempotency-lock:${institutionId}:${createHash('sha256').update(idempotencyKey).digest('base64url')}`;

export const newLockToken = (fingerprint: string) =>
  `${fingerprint}.${randomBytes(12).toString('base64url')}`;

const fingerprintOfToken = (token: string) => token.slice(0, token.lastIndexOf('.'));

export type LockAttempt =
  { acquired: true } | { acquired: false; holderFingerprint: string | null };

export async function acquireLock(
  redis: Redis,
  key: string,
  token: string,
  leaseMs: number,
): Promise<LockAttempt> {
  const set = await redis.set(key, token, 'PX', leaseMs, 'NX');
  if (set === 'OK') return { acquired: true };
  const holder = await redis.get(key);
  return {
    acquired: false,
    holderFingerprint: holder === null ? null : fingerprintOfToken(holder),
  };
}

const releaseScript = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** Deletes the lock only if this token still holds it. */
export async function releaseLock(redis: Redis, key: string, token: string): Promise<void> {
  await redis.eval(releaseScript, 1, key, token);
}
