import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { money, oneOf, recordId } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

export const awardIdentity: ResourceIdentity = {
  name: 'awards',
  object: 'award',
  label: 'award',
  path: '/awards',
};

export const awardStatuses = ['offered', 'accepted', 'declined', 'cancelled', 'disbursed'] as const;
export type AwardStatus = (typeof awardStatuses)[number];

/** Awards that hold their place and draw on their fund: every status but declined and cancelled. */
export const liveAwardStatuses = ['offered', 'accepted', 'disbursed'] as const;
export const isLive = (status: unknown): boolean =>
  (liveAwardStatuses as readonly unknown[]).includes(status);

/**
 * The state machine: offered -> accepted | declined | cancelled, accepted -> disbursed |
 * cancelled. Declined, cancelled and disbursed are final, so no award ever becomes live again.
 */
export const awardTransitions: Record<AwardStatus, readonly AwardStatus[]> = {
  offered: ['accepted', 'declined', 'cancelled'],
  accepted: ['disbursed', 'cancelled'],
  declined: [],
  cancelled: [],
  disbursed: [],
};

export const awardShape: Shape = {
  award_cycle_id: { schema: recordId, required: true },
  scholarship_id: { schema: recordId, required: true },
  student_id: { schema: recordId, required: true },
  amount: { schema: money, required: true },
  status: { schema: oneOf(awardStatuses) },
};

export const awardDefaults = { status: 'offered' } as const;

export const awardRow = z.object({
  id: z.number(),
  award_cycle_id: z.number(),
  scholarship_id: z.number(),
  student_id: z.number(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  status: z.enum(awardStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AwardRow = z.infer<typeof awardRow>;
export type AwardFields = Omit<AwardRow, 'id' | 'created_at' | 'updated_at'>;

export const awardTable: Table<AwardRow, AwardFields> = {
  name: 'awards',
  row: awardRow,
  writeAs: { amount: (amount) => sql.fragment`${String(amount)}::numeric` },
};
