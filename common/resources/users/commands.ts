import {
  lockClause,
  pathId,
  pick,
  previewCreated,
  previewUpdated,
  type Command,
  type CommandContext,
} from '../../commands/command.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse, isEmailTaken } from '../checks.js';
import { presentUser } from './present.js';
import { findUser, insertUser, updateUser } from './queries.js';
import {
  userDefaults,
  userReadOnly,
  userRequired,
  userShape,
  type UserFields,
  type UserRow,
} from './schema.js';

const fieldNames = ['email', 'first_name', 'last_name', 'role', 'status'] as const;
const constraints = { users_institution_email_key: alreadyInUse('email', 'user') };

/** Every rule for a user, on the merged record of a create or an update. */
async function validateUser(
  ctx: CommandContext,
  body: JsonObject,
  existing: UserRow | null,
): Promise<UserFields> {
  const validation = validateBody(userShape, body, userReadOnly);
  const record: Record<string, unknown> = { ...(existing ?? userDefaults), ...validation.values };
  requireFields(record, userRequired, validation);
  const email = record.email;
  if (
    validation.sent.has('email') &&
    !validation.invalid.has('email') &&
    typeof email === 'string'
  ) {
    if (await isEmailTaken(ctx.db, 'users', ctx.institution.id, email, existing?.id ?? null)) {
      validation.errors.push(alreadyInUse('email', 'user'));
    }
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as UserFields;
}

export const createUser: Command = {
  name: 'users.create',
  constraints,
  async execute(ctx, request) {
    const fields = await validateUser(ctx, request.body, null);
    const row = ctx.dryRun
      ? previewCreated(ctx, fields)
      : await insertUser(ctx.db, ctx.institution.id, fields);
    return { status: 201, body: presentUser(row), location: `/api/v1/users/${row.id}` };
  },
};

export const updateUserCommand: Command = {
  name: 'users.update',
  constraints,
  async execute(ctx, request) {
    const id = pathId(request);
    const existing = id ? await findUser(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
    if (!existing) throw errors.notFound('user');
    const fields = await validateUser(ctx, request.body, existing);
    const row = ctx.dryRun
      ? previewUpdated(ctx, existing, fields)
      : await updateUser(ctx.db, ctx.institution.id, existing.id, fields);
    return { status: 200, body: presentUser(row) };
  },
};
