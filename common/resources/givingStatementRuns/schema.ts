import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import type { JsonValue } from '../../json.js';
import { moneyOrZero, oneOf } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';
import { statementPeriods, statementYear } from '../givingStatements/schema.js';

export const givingStatementRunIdentity: ResourceIdentity = {
  name: 'giving_statement_runs',
  object: 'giving_statement_run',
  label: 'giving statement run',
  path: '/giving-statement-runs',
};

export const runStatuses = ['queued', 'running', 'completed', 'failed'] as const;

export const givingStatementRunShape: Shape = {
  year: { schema: statementYear, required: true },
  period: { schema: oneOf(statementPeriods) },
  min_total: { schema: moneyOrZero },
};

export const givingStatementRunDefaults: Record<string, JsonValue> = {
  period: 'calendar',
  min_total: 0,
};

export const givingStatementRunRow = z.object({
  id: z.number(),
  institution_id: z.number(),
  year: z.number(),
  period: z.enum(statementPeriods),
  period_start: z.string(),
  period_end: z.string(),
  /** numeric(14,2) as exact text; a number in a dry-run preview. */
  min_total: z.union([z.string(), z.number()]),
  status: z.enum(runStatuses),
  donors_total: z.number(),
  donors_done: z.number(),
  last_donor_id: z.number(),
  completed_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GivingStatementRunRow = z.infer<typeof givingStatementRunRow>;

export type GivingStatementRunFields = Pick<
  GivingStatementRunRow,
  'year' | 'period' | 'period_start' | 'period_end' | 'min_total' | 'donors_total'
>;

export const givingStatementRunTable: Table<GivingStatementRunRow, GivingStatementRunFields> = {
  name: 'giving_statement_runs',
  row: givingStatementRunRow,
  readAs: {
    period_start: sql.fragment`period_start::text`,
    period_end: sql.fragment`period_end::text`,
    min_total: sql.fragment`min_total::text`,
  },
  writeAs: {
    period_start: (day) => sql.fragment`${day}::date`,
    period_end: (day) => sql.fragment`${day}::date`,
    min_total: (amount) => sql.fragment`${String(amount)}::numeric`,
  },
};
