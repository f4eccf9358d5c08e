import type { DatabasePool } from 'slonik';
import { revokedKey } from '../common/auth/liveKey.js';
import { answerFrom, failure, type WriteJob } from '../common/commands/runWrite.js';
import type { WriteResult } from '../common/commands/writeResult.js';
import { errors } from '../common/errors.js';
import { findReceiptsFor } from '../common/idempotency/receipts.js';
import {
  acquireLeases,
  EXTEND_AFTER_MS,
  extendLeases,
  lockKeyFor,
  newLockToken,
  releaseLeases,
  type Lease,
} from '../common/idempotency/lock.js';
import {
  MAX_WRITES_PER_JOB,
  WRITE_JOB,
  type QueueSettings,
  type WriteQueue,
} from '../common/queue.js';
import { shardOf } from '../common/queueShards.js';
import type { Redis } from '../common/redis.js';
import type { ReplyInbox, ResultWatch } from '../common/replies.js';

export interface BatchDeps {
  pool: DatabasePool;
  redis: Redis;
  /** Where the idempotency leases are (each in its institution's shard). */
  settings: QueueSettings;
  /** One queue per shard (common/queue.ts). */
  queues: readonly WriteQueue[];
  replies: ReplyInbox;
  writeTimeoutMs: number;
  /** The lease a write still unanswered after EXTEND_AFTER_MS, or answered 504, is given. */
  extendedLeaseMs: number;
  /** Told the number of writes of each job queued (a metric). */
  onQueued?(writes: number): void;
}

/** A write waiting for its shard's next job. */
interface Entry {
  job: WriteJob;
  /** Its idempotency key's lease; null for a keyless write. */
  lease: (Lease & { trustDone: boolean }) | null;
  resolve(result: WriteResult): void;
  reject(error: unknown): void;
}

/**
 * Queues the real writes of one API process. The writes it receives in one turn of its event loop
 * for one shard go to the worker as one job: their idempotency leases are taken in one round
 * trip, the job is added in one more, and the worker settles the leases and answers the writes in
 * one message (worker/processor.ts). Under load many requests arrive together, so the queue's
 * costs are paid per batch rather than per write; alone, a write waits only for the end of the
 * turn it arrived in. Each write keeps its own lease, receipt, event, answer and timeout.
 */
export class WriteBatches {
  /** Writes waiting for the end of this turn, by shard. */
  private readonly waiting: Entry[][];

  constructor(private readonly deps: BatchDeps) {
    this.waiting = deps.queues.map(() => []);
  }

  /**
   * The write's outcome; rejects with `write_timeout` after WRITE_TIMEOUT_MS, or with Redis's
   * error when the write could not be queued (nothing was).
   */
  submit(job: WriteJob, trustDone = true): Promise<WriteResult> {
    const key = job.idempotencyKey;
    const lease = key
      ? {
          key: lockKeyFor(this.deps.settings, job.institution.id, key),
          token: newLockToken(job.fingerprint, job.requestId),
          trustDone,
        }
      : null;
    return new Promise((resolve, reject) => {
      const shard = shardOf(job.institution.id, this.waiting.length);
      const waiting = this.waiting[shard]!;
      waiting.push({ job, lease, resolve, reject });
      if (waiting.length === 1) setImmediate(() => this.flush(shard));
    });
  }

  private flush(shard: number): void {
    const entries = this.waiting[shard]!.splice(0);
    for (let start = 0; start < entries.length; start += MAX_WRITES_PER_JOB)
      void this.send(shard, entries.slice(start, start + MAX_WRITES_PER_JOB));
  }

  private async send(shard: number, entries: Entry[]): Promise<void> {
    const queued = await this.takeLeases(entries);
    if (queued.length === 0) return;
    const { replies, writeTimeoutMs } = this.deps;
    // Listening before the job exists means no outcome can be missed.
    const watches = queued.map((entry) => replies.watch(entry.job.requestId, writeTimeoutMs));
    try {
      await this.deps.queues[shard]!.add(
        WRITE_JOB,
        { writes: queued.map((entry) => entry.job), replyTo: replies.channelFor(shard) },
        // Request ids are unique, so the first write's names the job.
        { jobId: queued[0]!.job.requestId },
      );
    } catch (error) {
      for (const watch of watches) watch.cancel();
      // The job was never queued: the keys are free for a retry.
      void this.release(queued);
      for (const entry of queued) entry.reject(error);
      return;
    }
    this.deps.onQueued?.(queued.length);
    this.answer(queued, watches);
  }

  /**
   * Takes the keyed writes' leases; answers those whose key is held (409, 422) or done (the
   * receipt replayed), and returns the writes to queue.
   */
  private async takeLeases(entries: Entry[]): Promise<Entry[]> {
    const keyed = entries.filter((entry) => entry.lease);
    if (keyed.length === 0) return entries;
    let attempts;
    try {
      attempts = await acquireLeases(
        this.deps.redis,
        keyed.map((entry) => entry.lease!),
      );
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      return [];
    }
    const taken = new Set<Entry>();
    const done: Entry[] = [];
    keyed.forEach((entry, index) => {
      const attempt = attempts[index]!;
      if (attempt.state === 'acquired') taken.add(entry);
      else if (attempt.state === 'in_flight')
        entry.resolve(
          failure(
            attempt.holderFingerprint === entry.job.fingerprint
              ? errors.idempotencyKeyInFlight()
              : errors.idempotencyKeyMismatch(),
          ),
        );
      else done.push(entry);
    });
    if (done.length > 0) void this.replay(done);
    return entries.filter((entry) => !entry.lease || taken.has(entry));
  }

  /**
   * Keys done: their receipts answer, read in one query per institution that also confirms each
   * API key (no worker will).
   */
  private async replay(done: readonly Entry[]): Promise<void> {
    const byInstitution = Map.groupBy(done, (entry) => entry.job.institution.id);
    await Promise.all(
      [...byInstitution].map(async ([institutionId, entries]) => {
        let lookups;
        try {
          lookups = await findReceiptsFor(
            this.deps.pool,
            institutionId,
            'client',
            entries.map(({ job }) => ({ key: job.idempotencyKey!, apiKeyId: job.apiKeyId })),
          );
        } catch (error) {
          for (const entry of entries) entry.reject(error);
          return;
        }
        entries.forEach((entry, index) => {
          const { keyLive, completed } = lookups[index]!;
          if (!keyLive) entry.resolve(revokedKey);
          else if (completed) entry.resolve(answerFrom(completed, entry.job));
          // The receipt expired before its marker did: the key is free.
          else this.submit(entry.job, false).then(entry.resolve, entry.reject);
        });
      }),
    );
  }

  /**
   * Waits for each queued write's outcome. The leases are short until the job is queued; those of
   * writes still unanswered after EXTEND_AFTER_MS get the long lease in one round trip, and a
   * write answered 504 before that gets it then: the job still runs, and settles the lease when
   * it ends. Redis commands here are not awaited: with Redis frozen, one would only add its own
   * timeout to the answers.
   */
  private answer(queued: Entry[], watches: ResultWatch[]): void {
    const answered = queued.map(() => false);
    let open = queued.length;
    let extended = false;
    const extend = (leases: Lease[]) =>
      void extendLeases(this.deps.redis, leases, this.deps.extendedLeaseMs).catch(() => {});
    const timer = queued.some((entry) => entry.lease)
      ? setTimeout(() => {
          extended = true;
          extend(
            queued.flatMap((entry, index) =>
              entry.lease && !answered[index] ? [entry.lease] : [],
            ),
          );
        }, EXTEND_AFTER_MS)
      : undefined;
    queued.forEach((entry, index) => {
      const done = () => {
        answered[index] = true;
        if (--open === 0) clearTimeout(timer);
      };
      watches[index]!.result.then(
        (outcome) => {
          done();
          if (outcome !== 'timeout') return entry.resolve(outcome);
          if (entry.lease && !extended) extend([entry.lease]);
          entry.reject(errors.writeTimeout());
        },
        (error: unknown) => {
          done();
          // The job failed: its key is free for a retry (the worker freed it too).
          if (entry.lease) void this.release([entry]);
          entry.reject(error);
        },
      );
    });
  }

  private release(entries: readonly Entry[]): Promise<void> {
    const leases = entries.flatMap((entry) => (entry.lease ? [entry.lease] : []));
    return releaseLeases(this.deps.redis, leases).catch(() => {});
  }
}
