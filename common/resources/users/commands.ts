import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { alreadyInUse, checkUnique, type UniqueValue } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentUser } from './present.js';
import { userResponse } from './response.js';
import {
  userDefaults,
  userIdentity,
  userShape,
  userTable,
  type UserFields,
  type UserRow,
} from './schema.js';

const userEmail: UniqueValue = { table: 'users', column: 'email', ignoreCase: true, what: 'user' };

const usersResource: WritableResource<UserRow, UserFields> = {
  identity: userIdentity,
  table: userTable,
  shape: userShape,
  defaults: userDefaults,
  readOnly: readOnlyOf(userResponse, userShape),
  constraints: { users_institution_email_key: alreadyInUse('email', 'user') },
  present: presentUser,
  rules: (ctx, check) => checkUnique(ctx, check, userEmail),
};

export const createUser = createCommand(usersResource);
export const updateUserCommand = updateCommand(usersResource);
