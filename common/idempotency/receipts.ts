import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
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

/** The unexpired, completed response stored under a key, if any. */
export async function findReceipt(
  db: CommonQueryMethods,
  receipt: ReceiptKey,
): Promise<StoredResponse | null> {
  const row = await db.maybeOne(sql.type(receiptRow)`
    SELECT fingerprint, status_code, response_body, location
    FROM write_receipts
    WHERE institution_id = ${receipt.institutionId} AND source = ${receipt.source}
      AND key = ${receipt.key} AND expires_at > now() AND status_code IS NOT NULL`);
  return row ? toStored(row) : null;
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
