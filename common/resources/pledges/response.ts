import { z } from 'zod';
import { designationCodesResponse, recordCodesResponse } from '../campaigns/codesResponse.js';
import { MAX_SPLITS } from '../gifts/schema.js';
import {
  calendarDay,
  exchangeRateValue,
  moneyAmount,
  recordIdOf,
  reference,
  timestamp,
  timestamps,
} from '../responseFields.js';
import { frequencies, installmentStatuses, MAX_INSTALLMENTS } from './schedule.js';
import { pledgeStatuses } from './schema.js';

const installmentResponse = z.object({
  number: z.number().int().min(1).max(MAX_INSTALLMENTS).describe('1 for the first installment.'),
  due_on: calendarDay,
  amount: moneyAmount,
  amount_paid: moneyAmount.describe(
    'What payments cover of it: they fill the earliest installments first.',
  ),
  status: z
    .enum(installmentStatuses)
    .describe(
      '`paid` in full; `overdue`: due before today, not paid in full, of an open pledge; else `partially_paid` or `due`.',
    ),
});

export const pledgeResponse = z.object({
  id: recordIdOf('pledge'),
  object: z.literal('pledge'),
  donor_id: reference('donor who pledged'),
  amount: moneyAmount.describe('What was promised, in `currency`.'),
  currency: z
    .string()
    .describe(
      'ISO 4217 code: the pledge’s `amount`, `amount_paid`, `balance` and installments are in it, and each payment must be in it.',
    ),
  exchange_rate: exchangeRateValue,
  base_amount: moneyAmount.describe(
    '`amount` in the base currency at `exchange_rate` (rounded half-even to the cent). Read-only.',
  ),
  pledge_date: calendarDay,
  fund_id: reference('designated fund')
    .nullable()
    .describe('The fund when the pledge has exactly one designation; null otherwise.'),
  designations: z
    .array(
      z.object({ fund_id: reference('fund'), amount: moneyAmount, ...designationCodesResponse }),
    )
    .max(MAX_SPLITS)
    .describe('The split across funds, in the order given; `[]` for an undesignated pledge.'),
  schedule: z.object({
    frequency: z.enum(frequencies),
    installments: z.number().int().min(1).max(MAX_INSTALLMENTS),
    first_due_on: calendarDay,
  }),
  installments: z
    .array(installmentResponse)
    .min(1)
    .max(MAX_INSTALLMENTS)
    .describe('The schedule expanded; the amounts sum exactly to `amount`. Read-only.'),
  amount_paid: moneyAmount.describe(
    'The net amounts (after refunds) of the pledge’s payments that are not voided.',
  ),
  balance: moneyAmount.describe('`amount - amount_paid - amount_written_off`.'),
  amount_written_off: moneyAmount.describe(
    'What a write-off gave up: the balance when it was written off (and what a later refund or void of a payment gives back).',
  ),
  base_amount_paid: moneyAmount.describe(
    'The payments’ net base amounts: what they brought in the base currency, each at its own rate. Read-only.',
  ),
  base_balance: moneyAmount.describe(
    '`balance` in the base currency at the pledge’s `exchange_rate`; outstanding figures (donor `giving.pledged_outstanding`, fund totals, receivables) sum it. Read-only.',
  ),
  status: z
    .enum(pledgeStatuses)
    .describe(
      '`open`; `fulfilled` once the balance reaches 0 (open again if a payment is refunded or voided); `written_off`; `cancelled`.',
    ),
  next_due_on: calendarDay
    .nullable()
    .describe(
      'The due date of the earliest installment not paid in full (in the past when it is late); null unless the pledge is open.',
    ),
  overdue_amount: moneyAmount.describe(
    'What installments due before today still owe; 0 unless the pledge is open.',
  ),
  note: z.string().nullable(),
  close_reason: z.string().nullable().describe('Why it was written off or cancelled.'),
  closed_at: timestamp.nullable().describe('When it was written off or cancelled.'),
  ...recordCodesResponse,
  ...timestamps,
});
export type PledgeResponse = z.infer<typeof pledgeResponse>;

export const pledgeReceivableResponse = z.object({
  object: z.literal('pledge_receivable'),
  pledge_id: reference('pledge'),
  donor_id: reference('donor who pledged'),
  amount: moneyAmount.describe('What was promised, in `currency`.'),
  currency: z.string().describe('ISO 4217 code of `amount` and `balance`.'),
  balance: moneyAmount.describe('What is still to be paid.'),
  base_balance: moneyAmount.describe('`balance` in the base currency, at the pledge’s rate.'),
  overdue_amount: moneyAmount.describe('What installments due before today still owe.'),
  next_due_on: calendarDay
    .nullable()
    .describe('The due date of the earliest installment not paid in full.'),
});
export type PledgeReceivableResponse = z.infer<typeof pledgeReceivableResponse>;
