import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import type { JsonValue } from '../../json.js';
import {
  calendarDate,
  currencyCode,
  rate,
  money,
  oneOf,
  recordId,
  text,
} from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import {
  codeDefaults,
  codeRow,
  codeShape,
  codeWriteAs,
  storedDesignationCodes,
  type LineCodes,
} from '../campaigns/recordCoding.js';
import { codedDesignationInput, MAX_SPLITS } from '../gifts/schema.js';
import type { Table } from '../table.js';
import { frequencies, MAX_INSTALLMENTS } from './schedule.js';

export const pledgeIdentity: ResourceIdentity = {
  name: 'pledges',
  object: 'pledge',
  label: 'pledge',
  path: '/pledges',
};

export const pledgeStatuses = ['open', 'fulfilled', 'written_off', 'cancelled'] as const;
export type PledgeStatus = (typeof pledgeStatuses)[number];

export const scheduleInput = z.strictObject({
  frequency: oneOf(frequencies),
  installments: z
    .number({ message: 'must be a whole number' })
    .int({ message: 'must be a whole number' })
    .min(1, { message: `must be 1 to ${MAX_INSTALLMENTS}` })
    .max(MAX_INSTALLMENTS, { message: `must be 1 to ${MAX_INSTALLMENTS}` }),
  first_due_on: calendarDate,
});
export type ScheduleInput = z.infer<typeof scheduleInput>;

export const pledgeShape: Shape = {
  donor_id: { schema: recordId, required: true },
  amount: { schema: money, required: true },
  currency: { schema: currencyCode },
  exchange_rate: { schema: rate },
  pledge_date: { schema: calendarDate, required: true },
  fund_id: { schema: recordId, nullable: true },
  designations: {
    schema: z
      .array(codedDesignationInput, { message: 'must be an array' })
      .max(MAX_SPLITS, { message: `must have at most ${MAX_SPLITS} designations` }),
  },
  schedule: { schema: scheduleInput, required: true },
  note: { schema: text(500), nullable: true },
  ...codeShape,
};

export const pledgeDefaults: Record<string, JsonValue> = {
  fund_id: null,
  designations: [],
  note: null,
  ...codeDefaults,
};

const installment = z.object({ number: z.number(), due_on: z.string(), amount: z.number() });
const fundShare = z.object({
  fund_id: z.number(),
  amount: z.number(),
  ...storedDesignationCodes,
});

const cents = z.union([z.string(), z.number()]);

export const pledgeRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: cents,
  currency: z.string(),
  /** numeric(18,6) as exact text; a number in a dry-run preview. */
  exchange_rate: cents,
  base_amount: cents,
  pledge_date: z.string(),
  designations: z.array(fundShare),
  schedule: z.object({
    frequency: z.enum(frequencies),
    installments: z.number(),
    first_due_on: z.string(),
  }),
  installments: z.array(installment),
  note: z.string().nullable(),
  status: z.enum(pledgeStatuses),
  amount_paid: cents,
  amount_written_off: cents,
  base_amount_paid: cents,
  close_reason: z.string().nullable(),
  closed_at: z.string().nullable(),
  ...codeRow,
  created_at: z.string(),
  updated_at: z.string(),
});
export type PledgeRow = z.infer<typeof pledgeRow>;

/**
 * What a create or an update writes. `fund_ids` repeats the funds of `designations` for the
 * `fund_id` filter. What follows from payments is settlePledge's to write.
 */
export type PledgeFields = Pick<
  PledgeRow,
  | 'donor_id'
  | 'amount'
  | 'currency'
  | 'exchange_rate'
  | 'base_amount'
  | 'pledge_date'
  | 'designations'
  | 'schedule'
  | 'installments'
  | 'note'
  | 'campaign_id'
  | 'appeal_id'
> & { fund_ids: number[] } & LineCodes;

export const pledgeTable: Table<PledgeRow, PledgeFields> = {
  name: 'pledges',
  row: pledgeRow,
  readAs: {
    pledge_date: sql.fragment`pledge_date::text`,
  },
  writeAs: {
    amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    exchange_rate: (rate) => sql.fragment`${String(rate)}::numeric`,
    base_amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    pledge_date: (date) => sql.fragment`${date}::date`,
    designations: (parts) => sql.fragment`${JSON.stringify(parts)}::jsonb`,
    installments: (rows) => sql.fragment`${JSON.stringify(rows)}::jsonb`,
    schedule: (schedule) => sql.fragment`${JSON.stringify(schedule)}::jsonb`,
    fund_ids: (ids) => sql.array(ids, 'int8'),
    ...codeWriteAs,
  },
};

/** How gifts refer to a pledge (`pledge_id`). */
export const pledgeReference: Reference = { table: 'pledges', noun: 'a pledge' };
