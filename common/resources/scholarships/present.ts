import type { ScholarshipResponse } from './response.js';
import type { ScholarshipRow } from './schema.js';

export const presentScholarship = (row: ScholarshipRow): ScholarshipResponse => ({
  id: row.id,
  object: 'scholarship',
  name: row.name,
  fund_id: row.fund_id,
  description: row.description,
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
