import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import {
  calendarDate,
  currencyCode,
  rate,
  money,
  moneyOrZero,
  oneOf,
  recordId,
  text,
} from '../../validation/fields.js';
import type { JsonValue } from '../../json.js';
import type { Shape } from '../../validation/validateBody.js';
import {
  codeDefaults,
  codeRow,
  codeShape,
  codeWriteAs,
  designationCodes,
  storedDesignationCodes,
  type LineCodes,
} from '../campaigns/recordCoding.js';
import type { Table } from '../table.js';
import {
  tributeInput,
  tributeReadAs,
  tributeRow,
  tributeWriteAs,
  type TributeFields,
} from './tribute.js';

export const giftIdentity: ResourceIdentity = {
  name: 'gifts',
  object: 'gift',
  label: 'gift',
  path: '/gifts',
};

export const giftTypes = [
  'cash',
  'check',
  'credit_card',
  'bank_transfer',
  'stock',
  'in_kind',
  'pledge',
  'other',
] as const;

/**
 * `pledge` said what a gift paid rather than how it was paid (giving.md §5): still accepted, and
 * marked deprecated in the document, which points to `pledge_id`.
 */
export const giftType = z.union(
  [
    z.enum(giftTypes).exclude(['pledge']),
    z.literal('pledge').meta({
      deprecated: true,
      description:
        'Deprecated: `type` is how the gift was paid; a payment of a pledge names it in `pledge_id` instead.',
    }),
  ],
  { message: `must be one of: ${giftTypes.join(', ')}` },
);

export const giftStatuses = ['posted', 'voided'] as const;

export const softCreditReasons = [
  'household',
  'solicitor',
  'donor_advised_fund',
  'matching_gift',
  'tribute',
  'other',
] as const;

/** giving.md §1–2: at most this many designations, and as many soft credits, per gift. */
export const MAX_SPLITS = 20;

export const listOf = <T extends z.ZodType>(item: T, what: string) =>
  z
    .array(item, { message: 'must be an array' })
    .max(MAX_SPLITS, { message: `must have at most ${MAX_SPLITS} ${what}` });

/** One part of a split: a fund and the amount it receives. */
export const designationInput = z.strictObject({
  fund_id: recordId,
  amount: money,
});

/**
 * A part of a gift's, a pledge's or a recurring gift's split: a fund, an amount, and the
 * part's own campaign and appeal, which win over the record's (fundraising.md §3).
 */
export const codedDesignationInput = z.strictObject({
  fund_id: recordId,
  amount: money,
  ...designationCodes,
});
export type DesignationInput = z.infer<typeof codedDesignationInput>;

export const softCreditInput = z.strictObject({
  donor_id: recordId,
  amount: money,
  reason: oneOf(softCreditReasons),
});
export type SoftCreditInput = z.infer<typeof softCreditInput>;

export const giftShape: Shape = {
  donor_id: { schema: recordId, required: true },
  recurring_gift_id: { schema: recordId, nullable: true },
  amount: { schema: money, required: true },
  currency: { schema: currencyCode },
  exchange_rate: { schema: rate },
  subject: { schema: text(200), required: true },
  gift_date: { schema: calendarDate, required: true },
  type: { schema: giftType },
  check_number: { schema: text(40), nullable: true },
  fund_id: { schema: recordId, nullable: true },
  designations: { schema: listOf(codedDesignationInput, 'designations') },
  soft_credits: { schema: listOf(softCreditInput, 'soft credits') },
  matches_gift_id: { schema: recordId, nullable: true },
  benefit_amount: { schema: moneyOrZero },
  // A payment of a pledge (giving.md §5).
  pledge_id: { schema: recordId, nullable: true },
  tribute: { schema: tributeInput, nullable: true },
  ...codeShape,
};

export const giftDefaults: Record<string, JsonValue> = {
  recurring_gift_id: null,
  type: 'cash',
  check_number: null,
  fund_id: null,
  designations: [],
  soft_credits: [],
  matches_gift_id: null,
  benefit_amount: 0,
  pledge_id: null,
  tribute: null,
  ...codeDefaults,
};

/**
 * A designation as stored: what the fund received of the gift and what it gave back, and both
 * in the base currency (absent on a gift recorded before currencies and not yet converted).
 */
export const storedDesignation = z.object({
  fund_id: z.number(),
  amount: z.number(),
  amount_refunded: z.number(),
  base_amount: z.number().optional(),
  base_amount_refunded: z.number().optional(),
  ...storedDesignationCodes,
});
export type StoredDesignation = z.infer<typeof storedDesignation>;

/** A soft credit as stored, with its amount in the base currency (as storedDesignation). */
export const storedSoftCredit = z.object({
  donor_id: z.number(),
  amount: z.number(),
  reason: z.enum(softCreditReasons),
  base_amount: z.number().optional(),
});
export type StoredSoftCredit = z.infer<typeof storedSoftCredit>;

export const giftRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  recurring_gift_id: z.number().nullable(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  /** numeric(18,6) text; null on a gift recorded before currencies and not yet converted. */
  exchange_rate: z.union([z.string(), z.number()]).nullable(),
  base_amount: z.union([z.string(), z.number()]).nullable(),
  base_amount_refunded: z.union([z.string(), z.number()]),
  subject: z.string(),
  gift_date: z.string(),
  type: z.enum(giftTypes),
  check_number: z.string().nullable(),
  designations: z.array(storedDesignation),
  soft_credits: z.array(storedSoftCredit),
  matches_gift_id: z.number().nullable(),
  /** The gifts that match this one, in id order (read through a subquery). */
  matched_by_gift_ids: z.array(z.number()),
  benefit_amount: z.union([z.string(), z.number()]),
  status: z.enum(giftStatuses),
  amount_refunded: z.union([z.string(), z.number()]),
  void_reason: z.string().nullable(),
  voided_at: z.string().nullable(),
  pledge_id: z.number().nullable(),
  ...tributeRow,
  ...codeRow,
  created_at: z.string(),
  updated_at: z.string(),
});
export type GiftRow = z.infer<typeof giftRow>;
/**
 * What a create or an update writes: the money history (status, refunds, voids) is not among
 * it. `fund_ids` and `soft_credit_donor_ids` repeat the ids of `designations` and
 * `soft_credits` for their GIN indexes (filters and totals); `campaign_ids` and `appeal_ids` the
 * effective codes of its lines (checkRecordCoding); storeGift writes them all together.
 */
export type GiftFields = Pick<
  GiftRow,
  | 'donor_id'
  | 'recurring_gift_id'
  | 'amount'
  | 'currency'
  | 'exchange_rate'
  | 'base_amount'
  | 'subject'
  | 'gift_date'
  | 'type'
  | 'check_number'
  | 'designations'
  | 'soft_credits'
  | 'matches_gift_id'
  | 'benefit_amount'
  | 'pledge_id'
  | 'campaign_id'
  | 'appeal_id'
> & { fund_ids: number[]; soft_credit_donor_ids: number[] } & TributeFields &
  LineCodes;

export const giftTable: Table<GiftRow, GiftFields> = {
  name: 'gifts',
  row: giftRow,
  readAs: {
    gift_date: sql.fragment`gift_date::text`,
    matched_by_gift_ids: sql.fragment`(SELECT coalesce(jsonb_agg(m.id ORDER BY m.id), '[]')
      FROM gifts m WHERE m.institution_id = gifts.institution_id AND m.matches_gift_id = gifts.id)`,
    ...tributeReadAs,
  },
  // Cast, because the single-statement insert (INSERT … SELECT) gives these no column type.
  writeAs: {
    amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    exchange_rate: (rate) => sql.fragment`${rate === null ? null : String(rate)}::numeric`,
    base_amount: (amount) => sql.fragment`${amount === null ? null : String(amount)}::numeric`,
    gift_date: (date) => sql.fragment`${date}::date`,
    designations: (designations) => sql.fragment`${JSON.stringify(designations)}::jsonb`,
    soft_credits: (credits) => sql.fragment`${JSON.stringify(credits)}::jsonb`,
    matches_gift_id: (id) => sql.fragment`${id}::bigint`,
    recurring_gift_id: (id) => sql.fragment`${id}::bigint`,
    pledge_id: (id) => sql.fragment`${id}::bigint`,
    benefit_amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    fund_ids: (ids) => sql.array(ids, 'int8'),
    soft_credit_donor_ids: (ids) => sql.array(ids, 'int8'),
    ...tributeWriteAs,
    ...codeWriteAs,
  },
};
