import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { calendarDate, oneOf, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const awardCycleIdentity: ResourceIdentity = {
  name: 'award_cycles',
  object: 'award_cycle',
  label: 'award cycle',
  path: '/award-cycles',
};

export const awardCycleStatuses = ['draft', 'open', 'closed', 'archived'] as const;
export type AwardCycleStatus = (typeof awardCycleStatuses)[number];

/** The statuses a new cycle may start in (product.md §4). */
export const awardCycleInitialStatuses: readonly AwardCycleStatus[] = ['draft', 'open'];

/**
 * The state machine: draft -> open -> closed -> archived, closed -> open (reopen) and
 * draft -> archived (discard). Archived is final; keeping the same status is no transition.
 */
export const awardCycleTransitions: Record<AwardCycleStatus, readonly AwardCycleStatus[]> = {
  draft: ['open', 'archived'],
  open: ['closed'],
  closed: ['open', 'archived'],
  archived: [],
};

export const awardCycleShape: Shape = {
  name: { schema: text(200), required: true },
  starts_on: { schema: calendarDate, required: true },
  ends_on: { schema: calendarDate, required: true },
  status: { schema: oneOf(awardCycleStatuses) },
};

export const awardCycleDefaults = { status: 'draft' } as const;

const awardCycleRow = z.object({
  id: z.number(),
  name: z.string(),
  starts_on: z.string(),
  ends_on: z.string(),
  status: z.enum(awardCycleStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AwardCycleRow = z.infer<typeof awardCycleRow>;
export type AwardCycleFields = Omit<AwardCycleRow, 'id' | 'created_at' | 'updated_at'>;

const asDate = (value: string) => sql.fragment`${value}::date`;

export const awardCycleTable: Table<AwardCycleRow, AwardCycleFields> = {
  name: 'award_cycles',
  row: awardCycleRow,
  // node-postgres would turn a date into a Date at local midnight: dates are read as text.
  readAs: { starts_on: sql.fragment`starts_on::text`, ends_on: sql.fragment`ends_on::text` },
  writeAs: { starts_on: asDate, ends_on: asDate },
};

/** How other records refer to an award cycle. */
export const awardCycleReference: Reference = {
  table: 'award_cycles',
  noun: 'an award cycle',
  unusable: { statuses: ['draft', 'archived'], code: 'invalid_value' },
};
