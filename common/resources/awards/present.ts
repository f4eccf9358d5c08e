import type { AwardResponse } from './response.js';
import type { AwardRow } from './schema.js';

export const presentAward = (row: AwardRow): AwardResponse => ({
  id: row.id,
  object: 'award',
  award_cycle_id: row.award_cycle_id,
  scholarship_id: row.scholarship_id,
  student_id: row.student_id,
  amount: Number(row.amount),
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
