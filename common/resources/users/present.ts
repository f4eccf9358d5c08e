import type { UserResponse } from './response.js';
import type { UserRow } from './schema.js';

export const presentUser = (row: UserRow): UserResponse => ({
  id: row.id,
  object: 'user',
  email: row.email,
  first_name: row.first_name,
  last_name: row.last_name,
  role: row.role,
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
