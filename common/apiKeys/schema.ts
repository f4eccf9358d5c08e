import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { permissionGroups, permissionLevels, permissionsFromStored } from '../auth/permissions.js';
import type { JsonObject } from '../json.js';
import type { ListSpec } from '../pagination/listSpec.js';
import { timestamp } from '../resources/responseFields.js';

/** Who the resource is, for messages, paths and events (trust.md §2). */
export const apiKeyIdentity = {
  name: 'api_keys',
  object: 'api_key',
  label: 'API key',
  path: '/api-keys',
} as const;

/** A key's public id, as the operator CLI prints it and events and audit rows carry it. */
export const API_KEY_ID = /^key_[0-9a-f]{16}$/;

/** The most a key may live, from its making (GitHub's fine-grained tokens' ceiling). */
export const MAX_KEY_DAYS = 366;
/** The longest grace period of a rolled key, and the default one (Stripe's default is similar). */
export const MAX_ROLL_SECONDS = 604_800;
export const DEFAULT_ROLL_SECONDS = 86_400;

/** What a body sends as `permissions`: the schema that validates it and documents it. */
export const permissionsSchema = z
  .partialRecord(
    z.enum([...permissionGroups, '*']),
    z.enum(permissionLevels, { message: 'must be none, read or write' }),
    { message: 'must be an object of permission groups to none, read or write' },
  )
  .describe(
    'Permission groups to `none`, `read` or `write` (write implies read); `*` sets every group not named.',
  );

const apiKeyRow = z.object({
  seq: z.number(),
  id: z.string(),
  name: z.string(),
  permissions: z.unknown(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  rolled_from_id: z.string().nullable(),
});
export type ApiKeyRow = z.infer<typeof apiKeyRow>;

export const apiKeyColumns = sql.fragment`
  seq, id, name, permissions, expires_at, last_used_at, created_at, revoked_at, rolled_from_id`;

const keyId = z.string().regex(API_KEY_ID);

/** A key as GET answers it: never its secret, nor the secret's hash. */
export const apiKeyResponse = z.object({
  id: keyId.describe('The key’s public id (the `api_key_id` of events).'),
  object: z.literal('api_key'),
  name: z.string().max(100),
  prefix: z
    .string()
    .length(12)
    .describe('The first 12 characters of the key, to tell keys apart; never the secret.'),
  permissions: permissionsSchema,
  expires_at: timestamp.nullable().describe('When the key stops working; null for never.'),
  last_used_at: timestamp
    .nullable()
    .describe('The last minute the key was used (to the minute; within seconds of the use).'),
  created_at: timestamp,
  revoked_at: timestamp.nullable(),
  rolled_from_id: keyId.nullable().describe('The key this one was rolled from.'),
});

/** The answer of a create or a roll: the key, and its secret this once. */
export const apiKeyCreatedResponse = apiKeyResponse.extend({
  key: z
    .string()
    .describe(
      'The secret key, shown in this answer only (and in its replay under the same `Idempotency-Key`). On a dry run a placeholder.',
    ),
});

export const presentApiKey = (row: Omit<ApiKeyRow, 'seq'>): JsonObject => ({
  id: row.id,
  object: 'api_key',
  name: row.name,
  prefix: `dgs_${row.id}`.slice(0, 12),
  permissions: permissionsFromStored(row.permissions) as JsonObject,
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
  created_at: row.created_at,
  revoked_at: row.revoked_at,
  rolled_from_id: row.rolled_from_id,
});

/** One key of the institution; null when the id names none of its keys. */
export function findApiKey(
  db: CommonQueryMethods,
  institutionId: number,
  id: string,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<ApiKeyRow | null> {
  if (!API_KEY_ID.test(id)) return Promise.resolve(null);
  return db.maybeOne(sql.type(apiKeyRow)`
    SELECT ${apiKeyColumns} FROM api_keys
    WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

/** GET /api-keys: the institution's keys, newest first, revoked ones included. */
export const apiKeyList: ListSpec<ApiKeyRow> = {
  endpoint: '/api/v1/api-keys',
  from: sql.fragment`api_keys`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`seq`,
  columns: apiKeyColumns,
  row: apiKeyRow,
  keyOf: (row) => row.seq,
  present: presentApiKey,
  filters: {},
};

export const apiKeyRowSchema = apiKeyRow;
