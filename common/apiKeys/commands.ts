import { sql } from 'slonik';
import { z } from 'zod';
import { generateApiKey } from '../auth/apiKeys.js';
import { permissionsFromStored, within, type Permissions } from '../auth/permissions.js';
import { lockClause, type Command, type CommandContext } from '../commands/command.js';
import { errors, type FieldError } from '../errors.js';
import type { JsonObject } from '../json.js';
import { instant } from '../resources/consents/schema.js';
import { text } from '../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../validation/validateBody.js';
import {
  apiKeyColumns,
  apiKeyIdentity,
  apiKeyRowSchema,
  DEFAULT_ROLL_SECONDS,
  findApiKey,
  MAX_KEY_DAYS,
  MAX_ROLL_SECONDS,
  permissionsSchema,
  presentApiKey,
  type ApiKeyRow,
} from './schema.js';

export const apiKeyCreateShape: Shape = {
  name: { schema: text(100), required: true },
  permissions: { schema: permissionsSchema, required: true },
  expires_at: { schema: instant, nullable: true },
};

export const apiKeyRollShape: Shape = {
  expires_in_seconds: {
    schema: z
      .number({ message: 'must be a whole number of seconds' })
      .int({ message: 'must be a whole number of seconds' })
      .min(0, { message: `must be 0 to ${MAX_ROLL_SECONDS}` })
      .max(MAX_ROLL_SECONDS, { message: `must be 0 to ${MAX_ROLL_SECONDS}` }),
  },
};

const DAY_MS = 86_400_000;

/** What a dry run answers for the key it would make: nothing that works, nothing stored. */
const PLACEHOLDER_ID = 'key_0000000000000000';
const PLACEHOLDER_KEY = `dgs_${PLACEHOLDER_ID}_${'0'.repeat(32)}`;

const location = (id: string) => `/api/v1${apiKeyIdentity.path}/${id}`;

/** The key making the request: its permissions bound what it may grant. */
async function caller(ctx: CommandContext): Promise<{ id: string; permissions: Permissions }> {
  if (!ctx.apiKeyId) throw new Error('an API key command runs for a key');
  const stored = await ctx.db.oneFirst(sql.type(z.object({ permissions: z.unknown() }))`
    SELECT permissions FROM api_keys
    WHERE institution_id = ${ctx.institution.id} AND id = ${ctx.apiKeyId}`);
  return { id: ctx.apiKeyId, permissions: permissionsFromStored(stored) };
}

const notAllowed = (param: string, message: string) =>
  errors.validationFailed([{ param, code: 'not_allowed', message }]);

/** Inserts a key and answers it with its secret; a dry run answers a placeholder. */
async function makeKey(
  ctx: CommandContext,
  fields: {
    name: string;
    permissions: Permissions;
    expires_at: string | null;
    rolled_from_id: string | null;
  },
) {
  if (ctx.dryRun) {
    return {
      status: 201 as const,
      body: {
        ...presentApiKey({
          id: PLACEHOLDER_ID,
          ...fields,
          last_used_at: null,
          created_at: ctx.now,
          revoked_at: null,
        }),
        key: PLACEHOLDER_KEY,
      },
    };
  }
  const generated = generateApiKey();
  const row = await ctx.db.one(sql.type(apiKeyRowSchema)`
    INSERT INTO api_keys (id, institution_id, secret_sha256, name, permissions, expires_at,
                          rolled_from_id)
    VALUES (${generated.id}, ${ctx.institution.id}, ${sql.binary(generated.digest)},
            ${fields.name}, ${sql.jsonb(fields.permissions as JsonObject)}, ${fields.expires_at},
            ${fields.rolled_from_id})
    RETURNING ${apiKeyColumns}`);
  const presented = presentApiKey(row);
  return {
    status: 201 as const,
    body: { ...presented, key: generated.key },
    location: location(row.id),
    // The event carries the key without its secret: events reach webhooks and GET /events.
    eventObject: presented,
    eventObjectId: row.seq,
    secretFields: ['key'],
  };
}

/** POST /api-keys (trust.md §2): a key granting at most what its creator has. */
export const createApiKey: Command = {
  name: `${apiKeyIdentity.name}.create`,
  async execute(ctx, request) {
    const validation = validateBody(apiKeyCreateShape, request.body);
    const { values } = validation;
    requireFields(values, ['name', 'permissions'], validation);
    const problems: FieldError[] = [];
    const expiresAt = typeof values.expires_at === 'string' ? values.expires_at : null;
    if (expiresAt !== null) {
      const at = Date.parse(expiresAt);
      if (at <= Date.now() || at > Date.now() + MAX_KEY_DAYS * DAY_MS)
        problems.push({
          param: 'expires_at',
          code: 'out_of_range',
          message: `must be in the future and at most ${MAX_KEY_DAYS} days ahead`,
        });
    }
    const permissions = values.permissions as Permissions | undefined;
    if (permissions && !validation.invalid.has('permissions')) {
      const own = await caller(ctx);
      if (!within(permissions, own.permissions))
        problems.push({
          param: 'permissions',
          code: 'not_allowed',
          message: 'grants more than the key making the request has',
        });
    }
    const all = [...validation.errors, ...problems];
    if (all.length) throw errors.validationFailed(all);
    return makeKey(ctx, {
      name: values.name as string,
      permissions: permissions!,
      expires_at: expiresAt,
      rolled_from_id: null,
    });
  },
};

const keyParam = (ctx: CommandContext, id: string | undefined, lock = lockClause(ctx)) =>
  findApiKey(ctx.db, ctx.institution.id, id ?? '', lock);

const ended = (row: ApiKeyRow) =>
  row.revoked_at !== null || (row.expires_at !== null && Date.parse(row.expires_at) <= Date.now());

/**
 * POST /api-keys/{id}/roll: a new key of the same name and permissions, and the old one expiring
 * after the grace period. Rolling hands out a secret with the old key's permissions, so the
 * caller must hold them all.
 */
export const rollApiKey: Command = {
  name: `${apiKeyIdentity.name}.roll`,
  async execute(ctx, request) {
    const validation = validateBody(apiKeyRollShape, request.body);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const seconds =
      typeof validation.values.expires_in_seconds === 'number'
        ? validation.values.expires_in_seconds
        : DEFAULT_ROLL_SECONDS;
    const old = await keyParam(ctx, request.params.id);
    if (!old) throw errors.notFound(apiKeyIdentity.label);
    if (ended(old))
      throw errors.invalidStateTransition(
        'id',
        'This API key is revoked or expired: make a new key instead of rolling it.',
      );
    const own = await caller(ctx);
    const permissions = permissionsFromStored(old.permissions);
    if (!within(permissions, own.permissions))
      throw notAllowed('id', 'This key cannot roll a key with permissions it does not have.');
    // The key making the request would end with the request itself, and its answer be lost.
    if (old.id === own.id && seconds === 0)
      throw notAllowed(
        'expires_in_seconds',
        'A key rolling itself keeps working for at least 1 second.',
      );
    if (!ctx.dryRun)
      await ctx.db.query(sql.unsafe`
        UPDATE api_keys
        SET expires_at = least(coalesce(expires_at, 'infinity'),
                               now() + make_interval(secs => ${seconds}))
        WHERE institution_id = ${ctx.institution.id} AND id = ${old.id}`);
    return makeKey(ctx, {
      name: old.name,
      permissions,
      expires_at: null,
      rolled_from_id: old.id,
    });
  },
};

/** DELETE /api-keys/{id}: revoked at once (twice keeps the first time); never the caller's own. */
export const revokeApiKeyCommand: Command = {
  name: `${apiKeyIdentity.name}.revoke`,
  async execute(ctx, request) {
    const found = await keyParam(ctx, request.params.id);
    if (!found) throw errors.notFound(apiKeyIdentity.label);
    if (found.id === ctx.apiKeyId) throw notAllowed('id', 'A key cannot revoke itself.');
    if (ctx.dryRun)
      return {
        status: 200,
        body: presentApiKey({ ...found, revoked_at: found.revoked_at ?? ctx.now }),
      };
    const row = await ctx.db.one(sql.type(apiKeyRowSchema)`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
      WHERE institution_id = ${ctx.institution.id} AND id = ${found.id}
      RETURNING ${apiKeyColumns}`);
    return { status: 200, body: presentApiKey(row), eventObjectId: row.seq };
  },
};

export const apiKeyCommands: readonly Command[] = [createApiKey, rollApiKey, revokeApiKeyCommand];
