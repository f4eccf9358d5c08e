import type { AppealResponse } from './response.js';
import type { AppealRow } from './schema.js';

export const presentAppeal = (row: AppealRow): AppealResponse => ({
  id: row.id,
  object: 'appeal',
  name: row.name,
  code: row.code,
  campaign_id: row.campaign_id,
  channel: row.channel,
  starts_on: row.starts_on,
  ends_on: row.ends_on,
  cost: row.cost === null ? null : Number(row.cost),
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
