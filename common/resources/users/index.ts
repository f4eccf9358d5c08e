import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createUser, updateUserCommand } from './commands.js';
import { userList } from './list.js';
import { presentUser } from './present.js';
import { userResponse } from './response.js';
import { userDefaults, userIdentity, userShape, userTable } from './schema.js';

export const users: ResourceDescriptor = {
  ...userIdentity,
  permission: 'users',
  shape: userShape,
  defaults: userDefaults,
  response: userResponse,
  commands: { create: createUser, update: updateUserCommand },
  list: userList,
  retrieve: retrieveFrom(userTable, presentUser),
  text: {
    tag: 'Users',
    component: 'User',
    notes: {
      email: 'Unique per institution, compared case-insensitively (422 `already_in_use`).',
      status: 'A deactivated user cannot be assigned donors.',
    },
    rules: 'Staff who are assigned donors. `email` is unique per institution, case-insensitively.',
    filterNotes: { q: 'The name or email contains this text.' },
    examples: {
      create: {
        email: 'grace.hopper@example.org',
        first_name: 'Grace',
        last_name: 'Hopper',
        role: 'gift_officer',
      },
      update: { role: 'admin' },
    },
  },
};
