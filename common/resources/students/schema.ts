import { z } from 'zod';
import { email, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';

export const studentShape: Shape = {
  student_number: { schema: text(64), required: true },
  first_name: { schema: text(100), required: true },
  last_name: { schema: text(100), required: true },
  email: { schema: email, nullable: true },
};

export const studentDefaults = { email: null } as const;
export const studentRequired = ['student_number', 'first_name', 'last_name'] as const;
export const studentReadOnly = ['id', 'object', 'created_at', 'updated_at'] as const;

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
