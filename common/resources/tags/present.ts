import type { TagResponse } from './response.js';
import type { TagRow } from './schema.js';

export const presentTag = (row: TagRow): TagResponse => ({
  id: row.id,
  object: 'tag',
  name: row.name,
  color: row.color,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
