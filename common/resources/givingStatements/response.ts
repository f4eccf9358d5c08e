import { z } from 'zod';
import { addressResponse } from '../donors/response.js';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { statementPeriods, statementStatuses } from './schema.js';

const currency = z.string().describe('ISO 4217 code.');

const lineResponse = z.object({
  gift_id: reference('gift'),
  gift_date: calendarDay,
  receipt_number: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe(
      'The `number` of the gift’s issued receipt when the statement was issued; else null.',
    ),
  currency: currency.describe('The gift’s currency.'),
  amount: moneyAmount.describe('The gift’s `amount` net of its refunds, in its currency.'),
  benefit_amount: moneyAmount.describe('The gift’s `benefit_amount`.'),
  deductible_amount: moneyAmount.describe(
    '`amount - benefit_amount` (0 when that is negative); 0 for an in-kind gift.',
  ),
});

const totalResponse = z.object({
  currency,
  amount: moneyAmount.describe('The lines’ `amount` in this currency, added up.'),
  deductible_amount: moneyAmount.describe('The lines’ `deductible_amount` in this currency.'),
});

export const givingStatementResponse = z.object({
  id: recordIdOf('giving statement'),
  object: z.literal('giving_statement'),
  number: z
    .string()
    .regex(/^\d{4}-\d+$/)
    .describe(
      '`<year>-<n>`: n counts the institution’s statements of that year 1, 2, 3, … in the order of issue, with no gap and never reused. `<year>-0` in the response to a dry run.',
    )
    .meta({ examples: ['2026-1'] }),
  donor_id: reference('donor the statement is for'),
  year: z.number().int().describe('The calendar year, or the fiscal year (the year it ends in).'),
  period: z.enum(statementPeriods),
  period_start: calendarDay.describe('The first day of the period.'),
  period_end: calendarDay.describe('The last day of the period.'),
  status: z
    .enum(statementStatuses)
    .describe('`superseded`: a later statement for the same donor and period replaced it.'),
  superseded_by_id: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe('The statement that replaced this one; null while it is `issued`.'),
  run_id: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe('The run that issued the statement; null when it was issued on its own.'),
  donor_name: z.string().describe('The donor’s `display_name` when the statement was issued.'),
  donor_address: addressResponse
    .nullable()
    .describe('The donor’s `mailing_address` when the statement was issued; null when none.'),
  currency: currency.describe('The institution’s base currency, which `base_total` is in.'),
  lines: z
    .array(lineResponse)
    // A donor's counted gifts of one year; bounded for the document's sake.
    .max(100_000)
    .describe('Each counted gift of the period, by `gift_date` then `gift_id`.'),
  totals: z
    .array(totalResponse)
    .max(400)
    .describe('The lines added up per currency, by currency code.'),
  base_total: moneyAmount.describe(
    'The lines in the base currency: each gift’s base amount net of refunds, added up.',
  ),
  issued_on: calendarDay.describe('The day the statement was issued (UTC).'),
  ...timestamps,
});
export type GivingStatementResponse = z.infer<typeof givingStatementResponse>;
