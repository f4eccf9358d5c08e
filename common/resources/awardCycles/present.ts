import type { AwardCycleResponse } from './response.js';
import type { AwardCycleRow } from './schema.js';

export const presentAwardCycle = (row: AwardCycleRow): AwardCycleResponse => ({
  id: row.id,
  object: 'award_cycle',
  name: row.name,
  starts_on: row.starts_on,
  ends_on: row.ends_on,
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
