import type { GivingStatementRunResponse } from './response.js';
import type { GivingStatementRunRow } from './schema.js';

export const presentGivingStatementRun = (
  row: GivingStatementRunRow,
): GivingStatementRunResponse => ({
  id: row.id,
  object: 'giving_statement_run',
  year: row.year,
  period: row.period,
  period_start: row.period_start,
  period_end: row.period_end,
  min_total: Number(row.min_total),
  status: row.status,
  donors_total: row.donors_total,
  donors_done: row.donors_done,
  completed_at: row.completed_at,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
