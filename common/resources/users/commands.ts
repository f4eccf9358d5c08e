import { pick, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse, isTaken } from '../checks.js';
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
    if (await isTaken(ctx, 'users.email', email, existing?.id ?? null)) {
      validation.errors.push(alreadyInUse('email', 'user'));
    }
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as UserFields;
}

const usersResource: WritableResource<UserRow, UserFields> = {
  name: 'users',
  label: 'user',
  path: '/api/v1/users',
  constraints,
  validate: validateUser,
  find: findUser,
  insert: insertUser,
  update: updateUser,
  present: presentUser,
};

export const createUser = createCommand(usersResource);
export const updateUserCommand = updateCommand(usersResource);
