import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { email, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Reference } from '../checks.js';
import type { Table } from '../table.js';

export const studentIdentity: ResourceIdentity = {
  name: 'students',
  object: 'student',
  label: 'student',
  path: '/students',
};

export const studentShape: Shape = {
  student_number: { schema: text(64), required: true },
  first_name: { schema: text(100), required: true },
  last_name: { schema: text(100), required: true },
  email: { schema: email, nullable: true },
};

export const studentDefaults = { email: null } as const;

export const studentRow = z.object({
  id: z.number(),
  student_number: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type StudentRow = z.infer<typeof studentRow>;
export type StudentFields = Omit<StudentRow, 'id' | 'created_at' | 'updated_at'>;

export const studentTable: Table<StudentRow, StudentFields> = { name: 'students', row: studentRow };

/** How other records refer to a student. */
export const studentReference: Reference = {
  table: 'students',
  noun: 'a student',
};
