import { sql, type FragmentSqlToken, type ValueExpression } from 'slonik';
import { z } from 'zod';
import { today } from '../../clock.js';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import type { JsonValue } from '../../json.js';
import {
  calendarDate,
  currencyCode,
  rate,
  money,
  oneOf,
  recordId,
} from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import {
  codeDefaults,
  codeRow,
  codeShape,
  codeWriteAs,
  storedDesignationCodes,
} from '../campaigns/recordCoding.js';
import { codedDesignationInput, listOf } from '../gifts/schema.js';
import type { Table } from '../table.js';

export const recurringGiftIdentity: ResourceIdentity = {
  name: 'recurring_gifts',
  object: 'recurring_gift',
  label: 'recurring gift',
  path: '/recurring-gifts',
};

export const frequencies = ['weekly', 'monthly', 'quarterly', 'annually'] as const;

export const recurringGiftStatuses = ['active', 'paused', 'cancelled'] as const;
export type RecurringGiftStatus = (typeof recurringGiftStatuses)[number];

/** A new recurring gift is active, or recorded as paused already; never cancelled. */
export const recurringGiftInitialStatuses: readonly RecurringGiftStatus[] = ['active', 'paused'];

/** The state machine (giving.md §6): active ↔ paused, either → cancelled, which is final. */
export const recurringGiftTransitions: Record<RecurringGiftStatus, readonly RecurringGiftStatus[]> =
  {
    active: ['paused', 'cancelled'],
    paused: ['active', 'cancelled'],
    cancelled: [],
  };

export const recurringGiftShape: Shape = {
  donor_id: { schema: recordId, required: true },
  amount: { schema: money, required: true },
  currency: { schema: currencyCode },
  exchange_rate: { schema: rate },
  frequency: { schema: oneOf(frequencies), required: true },
  start_on: { schema: calendarDate, required: true },
  fund_id: { schema: recordId, nullable: true },
  designations: { schema: listOf(codedDesignationInput, 'designations') },
  status: { schema: oneOf(recurringGiftStatuses) },
  ...codeShape,
};

export const recurringGiftDefaults: Record<string, JsonValue> = {
  fund_id: null,
  designations: [],
  status: 'active',
  ...codeDefaults,
};

/** What the payments say (recurring_gift_figures in the migration); dates and money as text. */
const figures = z.object({
  gift_count: z.number(),
  last_gift_date: z.string().nullable(),
  total_given: z.string(),
  next_expected_on: z.string().nullable(),
  lapses_after: z.string().nullable(),
});
export type RecurringGiftFigures = z.infer<typeof figures>;

const recurringGiftRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  /** numeric(18,6) text; null on one recorded before currencies and not yet converted. */
  exchange_rate: z.union([z.string(), z.number()]).nullable(),
  base_amount: z.union([z.string(), z.number()]).nullable(),
  frequency: z.enum(frequencies),
  start_on: z.string(),
  designations: z.array(
    z.object({ fund_id: z.number(), amount: z.number(), ...storedDesignationCodes }),
  ),
  status: z.enum(recurringGiftStatuses),
  resumed_on: z.string().nullable(),
  figures,
  ...codeRow,
  created_at: z.string(),
  updated_at: z.string(),
});
export type RecurringGiftRow = z.infer<typeof recurringGiftRow>;
export type RecurringGiftFields = Omit<
  RecurringGiftRow,
  'id' | 'figures' | 'created_at' | 'updated_at'
>;

/** The figures of one recurring gift: the same function whether the record is stored or previewed. */
const figuresCall = (args: {
  institution: ValueExpression;
  id: ValueExpression;
  start_on: ValueExpression;
  frequency: ValueExpression;
  status: ValueExpression;
  resumed_on: ValueExpression;
}): FragmentSqlToken =>
  sql.fragment`recurring_gift_figures(${args.institution}, ${args.id}, ${args.start_on},
    ${args.frequency}, ${args.status}, ${args.resumed_on})`;

const column = (name: string) => sql.fragment`recurring_gifts.${sql.identifier([name])}`;

/** The figures of the row being read, inserted or updated. */
export const storedFigures = figuresCall({
  institution: column('institution_id'),
  id: column('id'),
  start_on: column('start_on'),
  frequency: column('frequency'),
  status: column('status'),
  resumed_on: column('resumed_on'),
});

/** The figures a record would have, for a dry run, which writes no row to read them from. */
export const previewFigures = (institutionId: number, row: RecurringGiftRow) =>
  sql.type(z.object({ figures }))`SELECT ${figuresCall({
    institution: institutionId,
    id: row.id,
    start_on: sql.fragment`${row.start_on}::date`,
    frequency: row.frequency,
    status: row.status,
    resumed_on: sql.fragment`${row.resumed_on}::date`,
  })} AS figures`;

/**
 * Lapsed (giving.md §6): the payment expected is more than one period late, that is today is
 * after `lapses_after`. The answer (isLapsed) and the list filter (lapsedCondition) say it alike.
 */
export const isLapsed = (row: Pick<RecurringGiftRow, 'figures'>) =>
  row.figures.lapses_after !== null && row.figures.lapses_after < today();

export const lapsedCondition = (lapsed: boolean) => {
  const late = sql.fragment`coalesce((${storedFigures} ->> 'lapses_after')::date < ${today()}::date, false)`;
  return lapsed ? late : sql.fragment`NOT ${late}`;
};

export const recurringGiftTable: Table<RecurringGiftRow, RecurringGiftFields> = {
  name: 'recurring_gifts',
  row: recurringGiftRow,
  readAs: {
    start_on: sql.fragment`start_on::text`,
    resumed_on: sql.fragment`resumed_on::text`,
    figures: storedFigures,
  },
  writeAs: {
    amount: (amount) => String(amount),
    exchange_rate: (rate) => sql.fragment`${rate === null ? null : String(rate)}::numeric`,
    base_amount: (amount) => sql.fragment`${amount === null ? null : String(amount)}::numeric`,
    designations: (designations) => sql.fragment`${JSON.stringify(designations)}::jsonb`,
    start_on: (date) => sql.fragment`${date}::date`,
    resumed_on: (date) => sql.fragment`${date}::date`,
    ...codeWriteAs,
  },
};

/** How payments (gifts) refer to a recurring gift. */
export const recurringGiftReference: Reference = {
  table: 'recurring_gifts',
  noun: 'a recurring gift',
};
