import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Institution } from '../commands/command.js';
import { liveKey } from './liveKey.js';
import { permissionsFromStored, type Permissions } from './permissions.js';

/**
 * A key reads `dgs_<key id>_<secret>`. The id is public (it names the key in logs and in the
 * CLI); the secret has 192 random bits. Only the SHA-256 of the whole key is stored.
 */
const keyPattern = /^dgs_(key_[0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

export const digestOf = (key: string) => createHash('sha256').update(key).digest();

export function generateApiKey(): { id: string; key: string; digest: Buffer } {
  const id = `key_${randomBytes(8).toString('hex')}`;
  const key = `dgs_${id}_${randomBytes(24).toString('base64url')}`;
  return { id, key, digest: digestOf(key) };
}

export interface Principal {
  apiKeyId: string;
  institution: Institution;
  /** What the key may do (trust.md §1). */
  permissions: Permissions;
  /** When the key stops working (epoch ms), or null: a key remembered by an API process ends then too. */
  expiresAt: number | null;
}

const keyRow = z.object({
  api_key_id: z.string(),
  secret_sha256: z.instanceof(Buffer),
  institution_id: z.number(),
  name: z.string(),
  currency: z.string(),
  permissions: z.unknown(),
  expires_at: z.number().nullable(),
  live: z.boolean(),
});

/** The public id a presented key names, or null when it is not shaped like a key. */
export const keyIdOf = (presented: string): string | null =>
  keyPattern.exec(presented)?.[1] ?? null;

/**
 * The institution a presented key acts for; null for any key that is malformed, unknown or
 * revoked; 'expired' for the right secret of a key past its `expires_at` (the one hint given).
 */
export async function authenticate(
  db: CommonQueryMethods,
  presented: string,
): Promise<Principal | 'expired' | null> {
  const keyId = keyIdOf(presented);
  if (!keyId) return null;
  const row = await db.maybeOne(sql.type(keyRow)`
    SELECT k.id AS api_key_id, k.secret_sha256, i.id AS institution_id, i.name, i.currency,
           k.permissions, (extract(epoch FROM k.expires_at) * 1000)::float8 AS expires_at,
           ${liveKey(keyId)} AS live
    FROM api_keys k JOIN institutions i ON i.id = k.institution_id
    WHERE k.id = ${keyId} AND k.revoked_at IS NULL`);
  if (!row || !timingSafeEqual(row.secret_sha256, digestOf(presented))) return null;
  if (!row.live) return 'expired';
  return {
    apiKeyId: row.api_key_id,
    institution: { id: row.institution_id, name: row.name, currency: row.currency },
    permissions: permissionsFromStored(row.permissions),
    expiresAt: row.expires_at,
  };
}
