import { IntegrityConstraintViolationError, sql, type DatabasePool } from 'slonik';
import { revokedKey } from '../auth/liveKey.js';
import { ApiError, errors } from '../errors.js';
import { previousAttributes, writeEventOf } from '../events/outbox.js';
import {
  findReceiptFor,
  insertWithReceipt,
  storeReceipt,
  type CreatedOutcome,
  type ReceiptedCreate,
  type ReceiptKey,
  type StoredResponse,
} from '../idempotency/receipts.js';
import type { Command, Consequence, Institution, WriteRequest } from './command.js';
import type { WriteResult } from './writeResult.js';

/** The job contract between API and worker: everything a write needs, nothing it must look up. */
export interface WriteJob {
  command: string;
  institution: Institution;
  apiKeyId: string;
  requestId: string;
  request: WriteRequest;
  fingerprint: string;
  idempotencyKey: string | null;
}

export interface RunOptions {
  dryRun: boolean;
  /**
   * Commits a single-statement create with its receipt; the worker shares statements between
   * concurrent jobs (worker/groupCommit.ts). By default each create is its own statement.
   */
  commitCreate?(item: ReceiptedCreate): Promise<CreatedOutcome | null>;
  idempotencyTtlSeconds: number;
}

/**
 * The key was revoked after the API admitted the write (the API may admit a write on a key it
 * confirmed seconds ago): refused, and not answered from an earlier receipt either.
 */
class KeyRevoked extends Error {
  constructor() {
    super('api key revoked');
  }
}

/** Rolls the write back; its key already answered (a replay, or a mismatch). */
class Replay extends Error {
  constructor(readonly result: WriteResult) {
    super('replay');
  }
}

export const failure = (error: ApiError): WriteResult => ({
  ok: false,
  status: error.status,
  error: error.body,
  headers: error.headers,
});

/**
 * Runs one write in one transaction (or one statement, see commitInOneStatement): validate and
 * apply through the command, then record the response under its receipt (idempotency key, or
 * the job id for a keyless write) and commit, provided the API key is still live (else 401 and
 * nothing written). If the receipt already holds an earlier write's response, everything rolls
 * back and that response is the answer. The write's event commits with its receipt
 * (common/events/outbox.ts). Any business error rolls everything back, so the key
 * stays free; the receipt (and the API key) is checked then too, since a refused write may be
 * the second delivery of one that committed. A dry run skips the receipt and runs read-only.
 */
export async function runWrite(
  pool: DatabasePool,
  command: Command,
  job: WriteJob,
  options: RunOptions,
): Promise<WriteResult> {
  const receipt: ReceiptKey = job.idempotencyKey
    ? { institutionId: job.institution.id, source: 'client', key: job.idempotencyKey }
    : { institutionId: job.institution.id, source: 'job', key: job.requestId };
  if (!options.dryRun) {
    const committed = await commitInOneStatement(pool, command, job, receipt, options);
    if (committed) return committed;
  }
  try {
    const outcome = await pool.transaction(async (db) => {
      if (options.dryRun) await db.query(sql.unsafe`SET TRANSACTION READ ONLY`);
      const consequences: Consequence[] = [];
      const result = await command.execute(
        {
          db,
          institution: job.institution,
          dryRun: options.dryRun,
          now: new Date().toISOString(),
          consequences,
          apiKeyId: job.apiKeyId,
        },
        job.request,
      );
      if (!options.dryRun) {
        const previous = result.previous ? previousAttributes(result.previous, result.body) : null;
        const claim = await storeReceipt(
          db,
          receipt,
          job.apiKeyId,
          job.fingerprint,
          options.idempotencyTtlSeconds,
          result,
          { ...writeEventOf(command.name, job, previous), previousAttributes: previous },
          consequences,
        );
        if (claim.outcome === 'key_revoked') throw new KeyRevoked();
        if (claim.outcome === 'earlier') throw new Replay(answerFrom(claim.earlier, job));
      }
      return result;
    });
    const { status, body, location } = outcome;
    return { ok: true, status, body, location: location ?? null, replayed: false };
  } catch (error) {
    if (error instanceof Replay) return error.result;
    if (error instanceof KeyRevoked) return revokedKey;
    const answer = refusal(command, error);
    // A dry run was authenticated against Postgres by the API, just now.
    if (options.dryRun) return answer;
    const { keyLive, completed } = await findReceiptFor(pool, receipt, job.apiKeyId);
    if (!keyLive) return revokedKey;
    return completed ? answerFrom(completed, job) : answer;
  }
}

/**
 * The common create in one round trip instead of a transaction's five, when the command can
 * state it as one statement, which also confirms the API key. Null when it cannot, or when the
 * statement was refused or the key is revoked: that left nothing behind, and runWrite's
 * transaction then judges the write in full (the reference that is gone, the key that already
 * holds a receipt, the revoked API key).
 */
async function commitInOneStatement(
  pool: DatabasePool,
  command: Command,
  job: WriteJob,
  receipt: ReceiptKey,
  options: RunOptions,
): Promise<WriteResult | null> {
  const create = command.singleStatement?.(
    { institution: job.institution, dryRun: false, now: new Date().toISOString() },
    job.request,
  );
  if (!create) return null;
  try {
    const item: ReceiptedCreate = {
      create,
      apiKeyId: job.apiKeyId,
      receipt,
      fingerprint: job.fingerprint,
      ttlSeconds: options.idempotencyTtlSeconds,
      event: writeEventOf(command.name, job),
    };
    const outcome = await (options.commitCreate?.(item) ?? insertWithReceipt(pool, item));
    return outcome && { ok: true, ...outcome, replayed: false };
  } catch (error) {
    if (error instanceof IntegrityConstraintViolationError) return null;
    throw error;
  }
}

/** What a write whose key already holds a response gets: that response, or a mismatch. */
export function answerFrom(earlier: StoredResponse, job: WriteJob): WriteResult {
  if (earlier.fingerprint !== job.fingerprint) return failure(errors.idempotencyKeyMismatch());
  return {
    ok: true,
    status: earlier.status,
    body: earlier.body,
    location: earlier.location,
    replayed: true,
  };
}

/** The answer to a refused write: its business error; anything else is rethrown. */
function refusal(command: Command, error: unknown): WriteResult {
  if (error instanceof ApiError) return failure(error);
  if (error instanceof IntegrityConstraintViolationError && error.constraint) {
    const meaning = command.constraints?.[error.constraint];
    if (meaning) {
      return failure(
        typeof meaning === 'function' ? meaning() : errors.validationFailed([meaning]),
      );
    }
  }
  throw error;
}
