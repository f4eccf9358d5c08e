import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import {
  calendarDate,
  currencyCode,
  money,
  oneOf,
  recordId,
  text,
} from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

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

export const giftShape: Shape = {
  donor_id: { schema: recordId, required: true },
  amount: { schema: money, required: true },
  currency: { schema: currencyCode },
  subject: { schema: text(200), required: true },
  gift_date: { schema: calendarDate, required: true },
  type: { schema: oneOf(giftTypes) },
  check_number: { schema: text(40), nullable: true },
  fund_id: { schema: recordId, nullable: true },
};

export const giftDefaults = { type: 'cash', check_number: null, fund_id: null } as const;

export const giftRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  subject: z.string(),
  gift_date: z.string(),
  type: z.enum(giftTypes),
  check_number: z.string().nullable(),
  fund_id: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GiftRow = z.infer<typeof giftRow>;
export type GiftFields = Omit<GiftRow, 'id' | 'created_at' | 'updated_at'>;

export const giftTable: Table<GiftRow, GiftFields> = {
  name: 'gifts',
  row: giftRow,
  readAs: { gift_date: sql.fragment`gift_date::text` },
  // Cast, because the single-statement insert (INSERT … SELECT) gives these no column type.
  writeAs: {
    amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    gift_date: (date) => sql.fragment`${date}::date`,
  },
};
