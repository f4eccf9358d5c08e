import { sql, type DatabasePool } from 'slonik';
import { revokeApiKey } from '../../common/institutions.js';

/**
 * Revokes a key without the notice that makes API processes forget it (the announcing trigger
 * off for the statement): as when a write was admitted on the key a moment before the notice
 * arrived. Only the worker's own check can refuse it then. For tests of that check.
 */
export async function revokeUnannounced(db: DatabasePool, apiKeyId: string): Promise<void> {
  await db.query(sql.unsafe`ALTER TABLE api_keys DISABLE TRIGGER api_keys_announce_change`);
  try {
    await revokeApiKey(db, apiKeyId);
  } finally {
    await db.query(sql.unsafe`ALTER TABLE api_keys ENABLE TRIGGER api_keys_announce_change`);
  }
}
