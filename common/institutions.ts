import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { generateApiKey } from './auth/apiKeys.js';
import type { JsonObject } from './json.js';

const institutionRow = z.object({
  id: z.number(),
  name: z.string(),
  currency: z.string(),
  created_at: z.string(),
});
type InstitutionRow = z.infer<typeof institutionRow>;

export const presentInstitution = (row: InstitutionRow): JsonObject => ({
  id: row.id,
  object: 'institution',
  name: row.name,
  currency: row.currency,
  created_at: row.created_at,
});

export function findInstitution(
  db: CommonQueryMethods,
  id: number,
): Promise<InstitutionRow | null> {
  return db.maybeOne(sql.type(institutionRow)`
    SELECT id, name, currency, created_at FROM institutions WHERE id = ${id}`);
}

/** Operator actions (the admin CLI); tenants cannot reach these. */
export async function createInstitution(pool: DatabasePool, name: string, currency: string) {
  return pool.transaction(async (db) => {
    const institution = await db.one(sql.type(institutionRow)`
      INSERT INTO institutions (name, currency) VALUES (${name}, ${currency})
      RETURNING id, name, currency, created_at`);
    const apiKey = await insertApiKey(db, institution.id);
    return { institution, apiKey };
  });
}

export async function insertApiKey(db: CommonQueryMethods, institutionId: number) {
  const generated = generateApiKey();
  await db.query(sql.unsafe`
    INSERT INTO api_keys (id, institution_id, secret_sha256)
    VALUES (${generated.id}, ${institutionId}, ${sql.binary(generated.digest)})`);
  return { id: generated.id, key: generated.key };
}

export function revokeApiKey(db: CommonQueryMethods, id: string) {
  return db.maybeOne(sql.type(z.object({ id: z.string(), revoked_at: z.string() }))`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}
    RETURNING id, revoked_at`);
}
