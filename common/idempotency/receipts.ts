import {
  sql,
  type CommonQueryMethods,
  type DatabaseTransactionConnection,
  type FragmentSqlToken,
} from 'slonik';
import { z } from 'zod';
import { liveKey } from '../auth/apiKeys.js';
import type { SingleStatementCreate } from '../commands/command.js';
import type { JsonObject } from '../json.js';

export type ReceiptSource = 'client' | 'job';

export interface ReceiptKey {
  institutionId: number;
  source: ReceiptSource;
  key: string;
}

export interface StoredResponse {
  fingerprint: string;
  status: number;
  body: JsonObject;
  location: string | null;
}

const receiptRow = z.object({
  fingerprint: z.string(),
  status_code: z.number().nullable(),
  response_body: z.record(z.string(), z.json()).nullable(),
  location: z.string().nullable(),
});

const toStored = (row: z.infer<typeof receiptRow>): StoredResponse => ({
  fingerprint: row.fingerprint,
  status: row.status_code ?? 0,
  body: (row.response_body ?? {}) as JsonObject,
  location: row.location,
});

/**
 * Records a write's response under its key, inside the write's own transaction, as its last
 * statement. Returns null when this transaction now holds the key (new, or the old receipt had
 * expired), else the response an earlier write committed under it; the caller then rolls back.
 * A concurrent write of the same key waits here until the other transaction ends, so exactly
 * one of them commits.
 */
export async function storeReceipt(
  db: DatabaseTransactionConnection,
  receipt: ReceiptKey,
  fingerprint: string,
  ttlSeconds: number,
  response: { status: number; body: JsonObject; location?: string | undefined },
): Promise<StoredResponse | null> {
  const stored = await db.maybeOne(sql.type(z.object({ stored: z.boolean() }))`
    INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                response_body, location, expires_at)
    VALUES (${receipt.institutionId}, ${receipt.source}, ${receipt.key}, ${fingerprint},
            ${response.status}, ${sql.json(response.body)}, ${response.location ?? null},
            now() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (institution_id, source, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, status_code = EXCLUDED.status_code,
          response_body = EXCLUDED.response_body, location = EXCLUDED.location,
          created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE write_receipts.expires_at <= now()
    RETURNING true AS stored`);
  if (stored) return null;
  const existing = await findReceipt(db, receipt);
  if (!existing) throw new Error('write receipt vanished while held');
  return existing;
}

/**
 * Stand-ins for the values an insert assigns, in a body presented before the insert: strings
 * holding U+0000, which no stored text can contain (Postgres refuses it, and so does validation),
 * so no client value can be taken for one. JSON writes U+0000 as the escape `\u0000`.
 */
const placeholders = {
  id: '\u0000id',
  created_at: '\u0000created_at',
  updated_at: '\u0000updated_at',
};

/** A timestamp of the created row as JSON, written as the API writes every timestamp. */
const jsonTimestamp = (column: 'created_at' | 'updated_at') =>
  sql.fragment`to_json(to_char(${sql.identifier(['created', column])} AT TIME ZONE 'UTC',
                               'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;

const storedCreate = z.object({
  response_body: z.record(z.string(), z.json()),
  location: z.string(),
});

/**
 * Commits a create and its receipt as one statement: one round trip, atomic on its own. The
 * receipt's body is the record presented from its fields with the id and timestamps the insert
 * assigned filled in, and the stored body is the answer, so the first response and every replay
 * are the same text. Null, writing nothing, when `guard` does not hold. Anything refused throws
 * Slonik's IntegrityConstraintViolationError and writes nothing: a reference that is gone, or a
 * key that already holds a receipt (even an expired one; storeReceipt's path takes those over).
 */
export async function insertWithReceipt(
  db: CommonQueryMethods,
  create: SingleStatementCreate,
  guard: FragmentSqlToken,
  receipt: ReceiptKey,
  fingerprint: string,
  ttlSeconds: number,
): Promise<{ status: 201; body: JsonObject; location: string } | null> {
  const template = JSON.stringify(create.present({ ...create.fields, ...placeholders }));
  const stored = await db.maybeOne(sql.type(storedCreate)`
    WITH created AS (${create.insert(guard)}),
    receipt AS (
      INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                  response_body, location, expires_at)
      SELECT ${receipt.institutionId}, ${receipt.source}, ${receipt.key}, ${fingerprint}, 201,
             replace(replace(replace(${template},
               ${JSON.stringify(placeholders.id)}, created.id::text),
               ${JSON.stringify(placeholders.created_at)}, ${jsonTimestamp('created_at')}),
               ${JSON.stringify(placeholders.updated_at)}, ${jsonTimestamp('updated_at')})::json,
             ${`${create.path}/`} || created.id,
             now() + make_interval(secs => ${ttlSeconds})
      FROM created
      RETURNING response_body, location)
    SELECT response_body, location FROM receipt`);
  if (!stored) return null;
  return { status: 201, body: stored.response_body as JsonObject, location: stored.location };
}

/** The key's unexpired, completed receipt, as a condition on `write_receipts r`. */
const completedUnder = (receipt: ReceiptKey) => sql.fragment`
  r.institution_id = ${receipt.institutionId} AND r.source = ${receipt.source}
  AND r.key = ${receipt.key} AND r.expires_at > now() AND r.status_code IS NOT NULL`;

/** The unexpired, completed response stored under a key, if any. */
export async function findReceipt(
  db: CommonQueryMethods,
  receipt: ReceiptKey,
): Promise<StoredResponse | null> {
  const row = await db.maybeOne(sql.type(receiptRow)`
    SELECT fingerprint, status_code, response_body, location
    FROM write_receipts r WHERE ${completedUnder(receipt)}`);
  return row ? toStored(row) : null;
}

const receiptWithKey = receiptRow.partial().extend({ key_live: z.boolean(), found: z.boolean() });

/**
 * findReceipt for a retry answered without a worker, together with whether the key that sends it
 * may still act (one round trip).
 */
export async function findReceiptFor(
  db: CommonQueryMethods,
  receipt: ReceiptKey,
  apiKeyId: string,
): Promise<{ keyLive: boolean; completed: StoredResponse | null }> {
  const row = await db.one(sql.type(receiptWithKey)`
    SELECT ${liveKey(apiKeyId)} AS key_live, r.fingerprint IS NOT NULL AS found,
           r.fingerprint, r.status_code, r.response_body, r.location
    FROM (SELECT 1) AS one LEFT JOIN write_receipts r ON ${completedUnder(receipt)}`);
  const completed = row.found ? toStored(receiptRow.parse(row)) : null;
  return { keyLive: row.key_live, completed };
}

/** Deletes expired receipts in batches; returns how many went. */
export async function purgeExpiredReceipts(
  db: CommonQueryMethods,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.query(sql.unsafe`
      DELETE FROM write_receipts
      WHERE ctid IN (SELECT ctid FROM write_receipts WHERE expires_at <= now() LIMIT ${batchSize})`);
    total += result.rowCount;
    if (result.rowCount < batchSize) return total;
  }
}
