import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { oneOf, recordId, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const scholarshipIdentity: ResourceIdentity = {
  name: 'scholarships',
  object: 'scholarship',
  label: 'scholarship',
  path: '/scholarships',
};

export const scholarshipStatuses = ['active', 'retired'] as const;

export const scholarshipShape: Shape = {
  name: { schema: text(200), required: true },
  fund_id: { schema: recordId, required: true },
  description: { schema: text(2000), nullable: true },
  status: { schema: oneOf(scholarshipStatuses) },
};

export const scholarshipDefaults = { description: null, status: 'active' } as const;

export const scholarshipRow = z.object({
  id: z.number(),
  name: z.string(),
  fund_id: z.number(),
  description: z.string().nullable(),
  status: z.enum(scholarshipStatuses),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ScholarshipRow = z.infer<typeof scholarshipRow>;
export type ScholarshipFields = Omit<ScholarshipRow, 'id' | 'created_at' | 'updated_at'>;

export const scholarshipTable: Table<ScholarshipRow, ScholarshipFields> = {
  name: 'scholarships',
  row: scholarshipRow,
};

/** How other records refer to a scholarship. */
export const scholarshipReference: Reference = {
  table: 'scholarships',
  noun: 'a scholarship',
  unusable: { statuses: ['retired'], code: 'reference_inactive' },
};
