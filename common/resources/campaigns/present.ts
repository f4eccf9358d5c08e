import type { CampaignResponse } from './response.js';
import type { CampaignRow } from './schema.js';

export const presentCampaign = (row: CampaignRow): CampaignResponse => ({
  id: row.id,
  object: 'campaign',
  name: row.name,
  code: row.code,
  parent_id: row.parent_id,
  starts_on: row.starts_on,
  ends_on: row.ends_on,
  goal: row.goal === null ? null : Number(row.goal),
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
