import { z } from 'zod';
import { calendarDay, moneyAmount, recordIdOf, timestamp, timestamps } from '../responseFields.js';
import { statementPeriods } from '../givingStatements/schema.js';
import { runStatuses } from './schema.js';

export const givingStatementRunResponse = z.object({
  id: recordIdOf('giving statement run'),
  object: z.literal('giving_statement_run'),
  year: z.number().int(),
  period: z.enum(statementPeriods),
  period_start: calendarDay,
  period_end: calendarDay,
  min_total: moneyAmount.describe(
    'Donors whose counted giving in the period, in the base currency, is above this get a statement.',
  ),
  status: z.enum(runStatuses).describe('`queued` → `running` → `completed` (or `failed`).'),
  donors_total: z
    .number()
    .int()
    .min(0)
    .describe(
      'The donors the run issues to: counted when it starts running (0 while `queued`), and what it did issue to once `completed`.',
    ),
  donors_done: z
    .number()
    .int()
    .min(0)
    .describe('The donors done so far; it advances while the run is `running`.'),
  completed_at: timestamp.nullable(),
  ...timestamps,
});
export type GivingStatementRunResponse = z.infer<typeof givingStatementRunResponse>;
