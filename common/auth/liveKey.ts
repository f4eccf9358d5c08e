import { sql, type FragmentSqlToken } from 'slonik';
import type { WriteResult } from '../commands/writeResult.js';
import { errors } from '../errors.js';

/**
 * When an API key may act, the one statement of the rule for API and worker alike: it exists,
 * is not revoked and has not expired. A write queued before its key expired and committed after
 * is refused as a revoked key's is. As SQL, so that it is checked inside the statement that relies on it: the
 * API's authentication (authenticate), the worker's receipt insert and single-statement create
 * (a write commits only while its key is live), and the receipt lookups that answer a retry or a
 * refused write. An API process may admit a real write on a key it confirmed seconds ago
 * (api/recentKeys.ts) because of this: the write itself confirms the key again.
 */
export const liveKey = (apiKeyId: string | FragmentSqlToken) =>
  sql.fragment`EXISTS (SELECT 1 FROM api_keys WHERE id = ${apiKeyId} AND revoked_at IS NULL
    AND (expires_at IS NULL OR expires_at > statement_timestamp()))`;

const invalid = errors.invalidApiKey();

/**
 * What a write whose key turned out not to be live gets, wherever that was found: 401, nothing
 * written, and no earlier response replayed either.
 */
export const revokedKey: WriteResult = Object.freeze({
  ok: false,
  status: invalid.status,
  error: Object.freeze(invalid.body),
  headers: Object.freeze(invalid.headers),
});

/** A write answered revokedKey (by a worker, or from a receipt lookup). */
export const isRevokedKey = (result: WriteResult): boolean =>
  !result.ok && result.error.code === invalid.body.code;
