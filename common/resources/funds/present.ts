import type { JsonObject } from '../../json.js';
import type { FundRow } from './schema.js';

export const presentFund = (row: FundRow): JsonObject => ({
  id: row.id,
  object: 'fund',
  name: row.name,
  code: row.code,
  description: row.description,
  restriction: row.restriction,
  endowed: row.endowed,
  award_limit: row.award_limit === null ? null : Number(row.award_limit),
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
