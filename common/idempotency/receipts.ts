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
 * Claims a key inside the write's transaction. Returns null when this transaction now owns the
 * key (new, or the old one had expired), else the committed response of the earlier write. A
 * concurrent claim of the same key waits here until the other transaction ends.
 */
export async function claimReceipt(
  db: DatabaseTransactionConnection,
  receipt: ReceiptKey,
  fingerprint: string,
  ttlSeconds: number,
): Promise<StoredResponse | null> {
  const claimed = await db.maybeOne(sql.type(z.object({ claimed: z.boolean() }))`
    INSERT INTO write_receipts (institution_id, source, key, fingerprint, expires_at)
    VALUES (${receipt.institutionId}, ${receipt.source}, ${receipt.key}, ${fingerprint},
            now() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (institution_id, source, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, status_code = NULL, response_body = NULL,
          location = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE write_receipts.expires_at <= now()
    RETURNING true AS claimed`);
  if (claimed) return null;
  const existing = await findReceipt(db, receipt);
  if (!existing) throw new Error('write receipt vanished while claimed');
  return existing;
}

export async function storeReceipt(
  db: DatabaseTransactionConnection,
  receipt: ReceiptKey,
  response: { status: number; body: JsonObject; location?: string | undefined },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE write_receipts
    SET status_code = ${response.status}, response_body = ${sql.json(response.body)},
        location = ${response.location ?? null}
    WHERE institution_id = ${receipt.institutionId} AND source = ${receipt.source}
      AND key = ${receipt.key}`);
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
