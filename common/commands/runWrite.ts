import { IntegrityConstraintViolationError, sql, type DatabasePool } from 'slonik';
import { ApiError, errors, type ErrorBody } from '../errors.js';
import type { JsonObject } from '../json.js';
import { claimReceipt, storeReceipt, type ReceiptKey } from '../idempotency/receipts.js';
import type { Command, CommandOutcome, Institution, WriteRequest } from './command.js';

/** The job contract between API and worker: everything a write needs, nothing it must look up. */
export interface WriteJob {
  command: string;
  institution: Institution;
  apiKeyId: string;
  requestId: string;
  request: WriteRequest;
  fingerprint: string;
  idempotencyKey: string | null;
  /** The API's in-flight lock on the key; the worker frees it once the outcome is committed. */
  lockToken: string | null;
}

/** Business outcomes travel back as data: BullMQ passes a thrown error on only as a string. */
export type WriteResult =
  | { ok: true; status: number; body: JsonObject; location: string | null; replayed: boolean }
  | { ok: false; status: number; error: ErrorBody; headers?: Record<string, string> };

export interface RunOptions {
  dryRun: boolean;
  /** Identifies this delivery of the job; a second delivery replays the first one's outcome. */
  jobId: string;
  idempotencyTtlSeconds: number;
}

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
 * Runs one write in one transaction: claim the receipt (idempotency key, or the job id for a
 * keyless write), validate and apply through the command, store the response, commit. Any
 * business error rolls everything back, so the key stays free. A dry run skips the receipt and
 * runs read-only.
 */
export async function runWrite(
  pool: DatabasePool,
  command: Command,
  job: WriteJob,
  options: RunOptions,
): Promise<WriteResult> {
  const receipt: ReceiptKey = job.idempotencyKey
    ? { institutionId: job.institution.id, source: 'client', key: job.idempotencyKey }
    : { institutionId: job.institution.id, source: 'job', key: options.jobId };
  try {
    const outcome: CommandOutcome = await pool.transaction(async (db) => {
      if (options.dryRun) {
        await db.query(sql.unsafe`SET TRANSACTION READ ONLY`);
      } else {
        const earlier = await claimReceipt(
          db,
          receipt,
          job.fingerprint,
          options.idempotencyTtlSeconds,
        );
        if (earlier) {
          if (earlier.fingerprint !== job.fingerprint) throw errors.idempotencyKeyMismatch();
          throw new Replay({
            ok: true,
            status: earlier.status,
            body: earlier.body,
            location: earlier.location,
            replayed: true,
          });
        }
      }
      const result = await command.execute(
        { db, institution: job.institution, dryRun: options.dryRun, now: new Date().toISOString() },
        job.request,
      );
      if (!options.dryRun) await storeReceipt(db, receipt, result);
      return result;
    });
    return { ok: true, ...outcome, location: outcome.location ?? null, replayed: false };
  } catch (error) {
    if (error instanceof Replay) return error.result;
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
}
