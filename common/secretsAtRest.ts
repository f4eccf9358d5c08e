import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Config } from './config.js';
import { CLEAR_FIELDS } from './idempotency/receipts.js';
import type { Logger } from './logger.js';
import { activeKeyring, keyringOf, needsResealing, seal, unseal, useKeyring } from './secrets.js';

/** Sets this process's keys from its config; a derived development key is said once, as a warning. */
export function useSecretsFrom(config: Config, logger: Logger): void {
  const keyring = keyringOf(config);
  useKeyring(keyring);
  if (keyring.derived)
    logger.warn(
      'SECRETS_KEY is not set: secrets at rest are sealed with a development key derived from CURSOR_SECRET; set SECRETS_KEY (openssl rand -hex 32) for anything real',
    );
}

const endpointRow = z.object({
  institution_id: z.number(),
  id: z.number(),
  secret: z.string(),
  previous_secret: z.string().nullable(),
});

const receiptRow = z.object({
  institution_id: z.number(),
  source: z.string(),
  key: z.string(),
  response_body: z.record(z.string(), z.json()),
  sealed_fields: z.string().nullable(),
});

/** The fields that tell a secret, by the `object` of the answer that tells it. */
const SECRET_FIELDS: Record<string, string> = { webhook_endpoint: 'secret', api_key: 'key' };

/**
 * The one rule for values stored before sealing began, or sealed under a key since rotated out
 * (trust.md §4): the worker, when it starts, seals each of them again under SECRETS_KEY, in
 * webhook endpoint rows and in unexpired receipts; meanwhile readers open both forms (a value in
 * clear reads as it is: common/secrets.ts unseal). Each row is changed only if it still holds
 * what was read, so a rotation at the same moment wins. Returns how many rows were sealed.
 */
export async function resealStoredSecrets(db: CommonQueryMethods): Promise<number> {
  const keyring = activeKeyring();
  const current = `sealed:v1:${keyring.current.id}:%`;
  let sealed = 0;
  const endpoints = await db.any(sql.type(endpointRow)`
    SELECT institution_id, id, secret, previous_secret FROM webhook_endpoints
    WHERE secret NOT LIKE ${current} OR previous_secret NOT LIKE ${current}`);
  for (const row of endpoints) {
    const again = (value: string) => (needsResealing(value) ? seal(unseal(value)) : value);
    const result = await db.query(sql.unsafe`
      UPDATE webhook_endpoints
      SET secret = ${again(row.secret)},
          previous_secret = ${row.previous_secret === null ? null : again(row.previous_secret)}
      WHERE institution_id = ${row.institution_id} AND id = ${row.id}
        AND secret = ${row.secret} AND previous_secret IS NOT DISTINCT FROM ${row.previous_secret}`);
    sealed += result.rowCount;
  }
  // Only receipts that tell a secret have sealed_fields (the migration marked the older ones
  // CLEAR_FIELDS), so this reads a partial index, not every receipt.
  const receipts = await db.any(sql.type(receiptRow)`
    SELECT institution_id, source, key, response_body, sealed_fields FROM write_receipts
    WHERE sealed_fields IS NOT NULL AND sealed_fields NOT LIKE ${current}
      AND expires_at > now()`);
  for (const row of receipts) {
    let body = row.response_body;
    let secrets: string;
    if (row.sealed_fields === CLEAR_FIELDS) {
      const field = SECRET_FIELDS[String(body.object)];
      if (field === undefined || body[field] === undefined) continue;
      secrets = JSON.stringify({ [field]: body[field] });
      body = { ...body, [field]: null };
    } else {
      secrets = unseal(row.sealed_fields!);
    }
    const result = await db.query(sql.unsafe`
      UPDATE write_receipts SET response_body = ${sql.json(body)}, sealed_fields = ${seal(secrets)}
      WHERE institution_id = ${row.institution_id} AND source = ${row.source}
        AND key = ${row.key} AND sealed_fields IS NOT DISTINCT FROM ${row.sealed_fields}`);
    sealed += result.rowCount;
  }
  return sealed;
}
