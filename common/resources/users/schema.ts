import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { email, oneOf, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const userIdentity: ResourceIdentity = {
  name: 'users',
  object: 'user',
  label: 'user',
  path: '/users',
};

export const userRoles = ['admin', 'gift_officer', 'scholarship_manager', 'viewer'] as const;
export const userStatuses = ['active', 'deactivated'] as const;

export const userShape: Shape = {
  email: { schema: email, required: true },
  first_name: { schema: text(100), required: true },
  last_name: { schema: text(100), required: true },
  role: { schema: oneOf(userRoles) },
  status: { schema: oneOf(userStatuses) },
};

export const userDefaults = { role: 'gift_officer', status: 'active' } as const;

export const userRow = z.object({
  id: z.number(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  role: z.enum(userRoles),
  status: z.enum(userStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type UserRow = z.infer<typeof userRow>;
export type UserFields = Omit<UserRow, 'id' | 'created_at' | 'updated_at'>;

export const userTable: Table<UserRow, UserFields> = { name: 'users', row: userRow };

/** How other records refer to a user. */
export const userReference: Reference = {
  table: 'users',
  noun: 'a user',
  unusable: { statuses: ['deactivated'], code: 'reference_inactive' },
};
