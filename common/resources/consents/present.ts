import type { ConsentResponse } from './response.js';
import type { ConsentRow } from './schema.js';

export const presentConsent = (row: ConsentRow): ConsentResponse => ({
  id: row.id,
  object: 'consent',
  donor_id: row.donor_id,
  channel: row.channel,
  purpose: row.purpose,
  response: row.response,
  source: row.source,
  statement: row.statement,
  captured_at: row.captured_at,
  created_at: row.created_at,
});
