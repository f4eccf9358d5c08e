import { z } from 'zod';
import { recordIdOf, timestamps } from '../responseFields.js';

export const studentResponse = z.object({
  id: recordIdOf('student'),
  object: z.literal('student'),
  student_number: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string().nullable(),
  ...timestamps,
});
export type StudentResponse = z.infer<typeof studentResponse>;
