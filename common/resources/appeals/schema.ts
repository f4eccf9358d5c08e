import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { calendarDate, moneyOrZero, oneOf, recordId, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import { asDate } from '../campaigns/schema.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const appealIdentity: ResourceIdentity = {
  name: 'appeals',
  object: 'appeal',
  label: 'appeal',
  path: '/appeals',
};

export const appealChannels = [
  'mail',
  'email',
  'phone',
  'event',
  'web',
  'social',
  'other',
] as const;
export const appealStatuses = ['active', 'closed'] as const;

export const appealShape: Shape = {
  name: { schema: text(200), required: true },
  code: { schema: text(30), required: true },
  campaign_id: { schema: recordId, nullable: true },
  channel: { schema: oneOf(appealChannels), required: true },
  starts_on: { schema: calendarDate, nullable: true },
  ends_on: { schema: calendarDate, nullable: true },
  // An email appeal may cost nothing to send: 0 is a cost, unlike a campaign's goal.
  cost: { schema: moneyOrZero, nullable: true },
  status: { schema: oneOf(appealStatuses) },
};

export const appealDefaults = {
  campaign_id: null,
  starts_on: null,
  ends_on: null,
  cost: null,
  status: 'active',
} as const;

const appealRow = z.object({
  id: z.number(),
  name: z.string(),
  code: z.string(),
  campaign_id: z.number().nullable(),
  channel: z.enum(appealChannels),
  starts_on: z.string().nullable(),
  ends_on: z.string().nullable(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  cost: z.union([z.string(), z.number()]).nullable(),
  status: z.enum(appealStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AppealRow = z.infer<typeof appealRow>;
export type AppealFields = Omit<AppealRow, 'id' | 'created_at' | 'updated_at'>;

export const appealTable: Table<AppealRow, AppealFields> = {
  name: 'appeals',
  row: appealRow,
  // node-postgres would turn a date into a Date at local midnight: dates are read as text.
  readAs: { starts_on: sql.fragment`starts_on::text`, ends_on: sql.fragment`ends_on::text` },
  writeAs: {
    starts_on: asDate,
    ends_on: asDate,
    cost: (cost) => sql.fragment`${cost === null ? null : String(cost)}::numeric`,
  },
};

/** How coded gift lines refer to an appeal: a closed one takes no new lines. */
export const appealReference: Reference = {
  table: 'appeals',
  noun: 'an appeal',
  unusable: { statuses: ['closed'], code: 'reference_inactive' },
};
