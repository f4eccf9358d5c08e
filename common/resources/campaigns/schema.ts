import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { calendarDate, money, oneOf, recordId, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const campaignIdentity: ResourceIdentity = {
  name: 'campaigns',
  object: 'campaign',
  label: 'campaign',
  path: '/campaigns',
};

export const campaignStatuses = ['active', 'closed'] as const;

/**
 * How many levels a campaign tree may have (a top-level campaign is level 1). It bounds the walk
 * up a chain and down a subtree, and no office's plan of campaigns is deeper.
 */
export const MAX_CAMPAIGN_DEPTH = 10;

export const campaignShape: Shape = {
  name: { schema: text(200), required: true },
  code: { schema: text(30), required: true },
  parent_id: { schema: recordId, nullable: true },
  starts_on: { schema: calendarDate, nullable: true },
  ends_on: { schema: calendarDate, nullable: true },
  goal: { schema: money, nullable: true },
  status: { schema: oneOf(campaignStatuses) },
};

export const campaignDefaults = {
  parent_id: null,
  starts_on: null,
  ends_on: null,
  goal: null,
  status: 'active',
} as const;

const campaignRow = z.object({
  id: z.number(),
  name: z.string(),
  code: z.string(),
  parent_id: z.number().nullable(),
  starts_on: z.string().nullable(),
  ends_on: z.string().nullable(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  goal: z.union([z.string(), z.number()]).nullable(),
  status: z.enum(campaignStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CampaignRow = z.infer<typeof campaignRow>;
export type CampaignFields = Omit<CampaignRow, 'id' | 'created_at' | 'updated_at'>;

export const asDate = (value: string | null) =>
  value === null ? null : sql.fragment`${value}::date`;

export const campaignTable: Table<CampaignRow, CampaignFields> = {
  name: 'campaigns',
  row: campaignRow,
  // node-postgres would turn a date into a Date at local midnight: dates are read as text.
  readAs: { starts_on: sql.fragment`starts_on::text`, ends_on: sql.fragment`ends_on::text` },
  writeAs: {
    starts_on: asDate,
    ends_on: asDate,
    goal: (goal) => sql.fragment`${goal === null ? null : String(goal)}::numeric`,
  },
};

/** How appeals and coded gift lines refer to a campaign: a closed one takes no new lines. */
export const campaignReference: Reference = {
  table: 'campaigns',
  noun: 'a campaign',
  unusable: { statuses: ['closed'], code: 'reference_inactive' },
};
