import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import type { JsonValue } from '../../json.js';
import { calendarDate, recordId } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

export const receiptIdentity: ResourceIdentity = {
  name: 'receipts',
  object: 'receipt',
  label: 'receipt',
  path: '/receipts',
};

export const receiptStatuses = ['issued', 'void'] as const;

export const receiptShape: Shape = {
  gift_id: { schema: recordId, required: true },
  issued_on: { schema: calendarDate },
};

/** `issued_on` defaults to the day of the write (UTC), which is not a constant to document. */
export const receiptDefaults: Record<string, JsonValue> = {};

/** The address as the donor presented it at issue: every key, null where not given. */
export const frozenAddress = z.object({
  line1: z.string().nullable(),
  line2: z.string().nullable(),
  city: z.string().nullable(),
  region: z.string().nullable(),
  postal_code: z.string().nullable(),
  country: z.string().nullable(),
});

export const receiptRow = z.object({
  id: z.number(),
  number: z.number(),
  gift_id: z.number(),
  donor_id: z.number(),
  issued_on: z.string(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  benefit_amount: z.union([z.string(), z.number()]),
  deductible_amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  status: z.enum(receiptStatuses),
  donor_name: z.string(),
  donor_address: frozenAddress.nullable(),
  void_reason: z.string().nullable(),
  voided_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ReceiptRow = z.infer<typeof receiptRow>;

/** What an issue writes: everything but the number, which the insert itself takes. */
export type ReceiptFields = Pick<
  ReceiptRow,
  | 'gift_id'
  | 'donor_id'
  | 'issued_on'
  | 'amount'
  | 'benefit_amount'
  | 'deductible_amount'
  | 'currency'
  | 'donor_name'
  | 'donor_address'
>;

export const receiptTable: Table<ReceiptRow, ReceiptFields> = {
  name: 'receipts',
  row: receiptRow,
  readAs: { issued_on: sql.fragment`issued_on::text` },
};
