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
 * Every script touches only the keys it is given (KEYS). An API process takes the leases of the
 * writes it queues together in one call, and the worker settles the writes of one job in one call;
 * those are always writes of one queue shard, whose keys all live in the shard's slot
 * (common/queue.ts), so the scripts work on Redis Cluster. Nothing here reads BullMQ's own keys:
 * BullMQ may trim or lose a job without changing what a key means.
 *
 * The life of a lease:
 * 1. The API takes it for LEASE_UNTIL_QUEUED_MS (acquireLeases). An API process that dies before
 *    its job is queued leaves the key held for at most that long.
 * 2. When the API has been waiting EXTEND_AFTER_MS for a queued job, or answers 504, it extends
 *    the lease to leaseAfterQueuedMs (extendLeases), so that a retry of a write that waits in a
 *    backlog or outlived its 504 is still told 409 rather than queueing a second job. Most
 *    writes finish sooner, so this costs them nothing.
 * 3. The worker settles it (settleLeases) before its job completes: the done marker after a
 *    commit (or a replay), deleted after a refusal or a failure (if still its lease). The API
 *    frees it itself (releaseLeases) when the job was not queued.
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

const fingerprintOf = (token: string) => token.slice(IN_FLIGHT.length, token.indexOf('.'));

export type LockAttempt =
  | { state: 'acquired' }
  | { state: 'in_flight'; holderFingerprint: string }
  | { state: 'done'; fingerprint: string };

/** A lease on one idempotency key: the key, and the token of the request that holds it. */
export interface Lease {
  key: string;
  token: string;
}

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

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]) {
    try {
      return (await redis.evalsha(this.sha, keys.length, ...keys, ...args)) as unknown;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(this.lua, keys.length, ...keys, ...args)) as unknown;
    }
  }
}

/**
 * For each key, takes the lease (ARGV[1] ms) unless the key is held, or done and its receipt is
 * trusted (that key's trust flag '1'); answers what holds each key, or false where the lease was
 * taken. A key given twice is held by its first request when the second is looked at.
 */
const acquireScript = new Script(`
local held = {}
for i, key in ipairs(KEYS) do
  local current = redis.call('get', key)
  if current and (ARGV[2 * i + 1] == '1' or string.sub(current, 1, 5) ~= 'done:') then
    held[i] = current
  else
    redis.call('set', key, ARGV[2 * i], 'PX', ARGV[1])
    held[i] = false
  end
end
return held`);

/**
 * Takes the leases of the writes an API process queues together, in one round trip.
 * `trustDone: false` overwrites a done marker whose receipt Postgres no longer has (expired).
 */
export async function acquireLeases(
  redis: Redis,
  leases: readonly (Lease & { trustDone: boolean })[],
): Promise<LockAttempt[]> {
  if (leases.length === 0) return [];
  const args: (string | number)[] = [LEASE_UNTIL_QUEUED_MS];
  for (const { token, trustDone } of leases) args.push(token, trustDone ? '1' : '0');
  const held = (await acquireScript.run(
    redis,
    leases.map(({ key }) => key),
    args,
  )) as (string | null)[];
  return leases.map((_, index): LockAttempt => {
    const current = held[index] ?? null;
    if (current === null) return { state: 'acquired' };
    if (current.startsWith(DONE)) return { state: 'done', fingerprint: current.slice(DONE.length) };
    return {
      state: 'in_flight',
      holderFingerprint: fingerprintOf(current),
    };
  });
}

/** Gives each lease ARGV[1] ms more, where its token still holds it. */
const extendScript = new Script(`
for i, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[i + 1] then redis.call('pexpire', key, ARGV[1]) end
end
return 0`);

export async function extendLeases(
  redis: Redis,
  leases: readonly Lease[],
  leaseMs: number,
): Promise<void> {
  if (leases.length === 0) return;
  await extendScript.run(
    redis,
    leases.map(({ key }) => key),
    [leaseMs, ...leases.map(({ token }) => token)],
  );
}

/**
 * Settles each lease key: made done for ARGV[1] seconds where its write committed (that key's
 * marker, a non-empty ARGV), whoever holds its lease, since Postgres now holds the receipt and
 * done is true of the key from now on; otherwise deleted where its token still holds it,
 * freeing the key for a corrected retry (a lease that ran out and was taken by a newer request
 * is left to that request). When ARGV[2] names a publish command, the last key is a channel
 * and the last ARGV the message it is sent, after the settlements and in the same step.
 */
const settleScript = new Script(`
local leases = #KEYS
if ARGV[2] ~= '' then leases = leases - 1 end
for i = 1, leases do
  local marker = ARGV[2 * i + 2]
  if marker ~= '' then
    redis.call('set', KEYS[i], marker, 'EX', ARGV[1])
  elseif redis.call('get', KEYS[i]) == ARGV[2 * i + 1] then
    redis.call('del', KEYS[i])
  end
end
if ARGV[2] ~= '' then redis.call(ARGV[2], KEYS[#KEYS], ARGV[#ARGV]) end
return 0`);

/** A message for the API process that waits on `channel` (common/replies.ts). */
export interface LeaseReply {
  channel: string;
  message: string;
  /** PUBLISH on one server; SPUBLISH on a cluster, where the channel is in the leases' slot. */
  command: 'publish' | 'spublish';
}

/**
 * The worker's one round trip once writes of a job have their outcomes: their leases settled
 * and, when given, the reply sent in the same script, so that Redis does both at once: a client
 * answered 201 who retries at once finds its key done. Nothing is sent when there is nothing to
 * settle (no reply either: send it on its own).
 */
export async function settleLeases(
  redis: Redis,
  settlements: readonly (Lease & { committed: boolean })[],
  doneSeconds: number,
  reply?: LeaseReply,
): Promise<void> {
  if (settlements.length === 0) return;
  const args: (string | number)[] = [doneSeconds, reply?.command ?? ''];
  for (const { token, committed } of settlements)
    args.push(token, committed ? `${DONE}${fingerprintOf(token)}` : '');
  const keys = settlements.map(({ key }) => key);
  if (reply) {
    keys.push(reply.channel);
    args.push(reply.message);
  }
  await settleScript.run(redis, keys, args);
}

/** Frees each key whose token still holds it (a job that was never queued). */
export function releaseLeases(redis: Redis, leases: readonly Lease[]): Promise<void> {
  return settleLeases(
    redis,
    leases.map((lease) => ({ ...lease, committed: false })),
    0,
  );
}
