import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import type { JsonValue } from '../../json.js';
import { oneOf, recordId } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';
import { frozenAddress } from '../receipts/schema.js';

export const givingStatementIdentity: ResourceIdentity = {
  name: 'giving_statements',
  object: 'giving_statement',
  label: 'giving statement',
  path: '/giving-statements',
};

export const statementStatuses = ['issued', 'superseded'] as const;
export const statementPeriods = ['calendar', 'fiscal'] as const;
export type StatementPeriod = (typeof statementPeriods)[number];

/** The years a statement may be for: four digits, as fiscal years are named everywhere. */
export const statementYear = z
  .number({ message: 'must be a year such as 2026' })
  .int({ message: 'must be a year such as 2026' })
  .min(1001, { message: 'must be a year from 1001 to 9998' })
  .max(9998, { message: 'must be a year from 1001 to 9998' });

export const givingStatementShape: Shape = {
  donor_id: { schema: recordId, required: true },
  year: { schema: statementYear, required: true },
  period: { schema: oneOf(statementPeriods) },
};

export const givingStatementDefaults: Record<string, JsonValue> = { period: 'calendar' };

/** One counted gift as the statement states it; amounts are exact decimal text. */
export const statementLine = z.object({
  gift_id: z.number(),
  gift_date: z.string(),
  receipt_number: z.number().nullable(),
  currency: z.string(),
  amount: z.string(),
  benefit_amount: z.string(),
  deductible_amount: z.string(),
});
export type StatementLine = z.infer<typeof statementLine>;

export const statementTotal = z.object({
  currency: z.string(),
  amount: z.string(),
  deductible_amount: z.string(),
});
export type StatementTotal = z.infer<typeof statementTotal>;

export const givingStatementRow = z.object({
  id: z.number(),
  year: z.number(),
  seq: z.number(),
  donor_id: z.number(),
  period: z.enum(statementPeriods),
  period_start: z.string(),
  period_end: z.string(),
  status: z.enum(statementStatuses),
  superseded_by_id: z.number().nullable(),
  run_id: z.number().nullable(),
  donor_name: z.string(),
  donor_address: frozenAddress.nullable(),
  currency: z.string(),
  lines: z.array(statementLine),
  totals: z.array(statementTotal),
  base_total: z.string(),
  issued_on: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GivingStatementRow = z.infer<typeof givingStatementRow>;

/** What an issue writes: everything but the id, the number and the state, which it assigns. */
export type GivingStatementFields = Omit<
  GivingStatementRow,
  'id' | 'seq' | 'status' | 'superseded_by_id' | 'created_at' | 'updated_at'
>;

export const givingStatementTable: Table<GivingStatementRow, GivingStatementFields> = {
  name: 'giving_statements',
  row: givingStatementRow,
  readAs: {
    period_start: sql.fragment`period_start::text`,
    period_end: sql.fragment`period_end::text`,
    issued_on: sql.fragment`issued_on::text`,
    currency: sql.fragment`currency::text`,
    base_total: sql.fragment`base_total::text`,
  },
};
