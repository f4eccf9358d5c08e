import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { flag, MAX_AMOUNT, oneOf, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const fundIdentity: ResourceIdentity = {
  name: 'funds',
  object: 'fund',
  label: 'fund',
  path: '/funds',
};

export const fundRestrictions = [
  'unrestricted',
  'temporarily_restricted',
  'permanently_restricted',
] as const;
export const fundStatuses = ['active', 'closed'] as const;

/**
 * A limit may be 0 (nothing may be awarded), unlike a gift amount. A value out of range is only
 * `out_of_range`: `abort` stops the decimal-places check, which "-1" or "1e+21" would also fail.
 */
const awardLimit = z
  .number({ message: 'must be a number or null' })
  .min(0, { message: 'must be 0 or more', abort: true })
  .max(MAX_AMOUNT, { message: `must be at most ${MAX_AMOUNT}`, abort: true })
  .refine((value) => /^\d+(\.\d{1,2})?$/.test(String(value)), {
    message: 'must have at most 2 decimal places',
    params: { code: 'invalid_format' },
  });

export const fundShape: Shape = {
  name: { schema: text(200), required: true },
  code: {
    schema: z
      .string({ message: 'must be a string' })
      .trim()
      .regex(/^[A-Z0-9][A-Z0-9_-]{0,31}$/, {
        message:
          'must be 1 to 32 capital letters, digits, "_" or "-", starting with a letter or digit',
      }),
    required: true,
  },
  description: { schema: text(2000), nullable: true },
  restriction: { schema: oneOf(fundRestrictions) },
  endowed: { schema: flag },
  award_limit: { schema: awardLimit, nullable: true },
  status: { schema: oneOf(fundStatuses) },
};

export const fundDefaults = {
  description: null,
  restriction: 'unrestricted',
  endowed: false,
  award_limit: null,
  status: 'active',
} as const;

export const fundRow = z.object({
  id: z.number(),
  name: z.string(),
  code: z.string(),
  description: z.string().nullable(),
  restriction: z.enum(fundRestrictions),
  endowed: z.boolean(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  award_limit: z.union([z.string(), z.number()]).nullable(),
  status: z.enum(fundStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FundRow = z.infer<typeof fundRow>;
export type FundFields = Omit<FundRow, 'id' | 'created_at' | 'updated_at'>;

/** Read-only `totals` of GET /funds/{id}, money as exact numeric text. */
export const fundTotalsRow = z.object({
  gifts_received: z.string(),
  awards_committed: z.string(),
  award_capacity_remaining: z.string().nullable(),
  pledged_outstanding: z.string(),
});
export type FundTotalsRow = z.infer<typeof fundTotalsRow>;

export const fundTable: Table<FundRow, FundFields> = {
  name: 'funds',
  row: fundRow,
  writeAs: {
    award_limit: (limit) => sql.fragment`${limit === null ? null : String(limit)}::numeric`,
  },
};

/** How other records refer to a fund. */
export const fundReference: Reference = {
  table: 'funds',
  noun: 'a fund',
  unusable: { statuses: ['closed'], code: 'reference_inactive' },
};
