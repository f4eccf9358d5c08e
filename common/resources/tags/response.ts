import { z } from 'zod';
import { recordIdOf, timestamps } from '../responseFields.js';

export const tagResponse = z.object({
  id: recordIdOf('tag'),
  object: z.literal('tag'),
  name: z.string(),
  color: z
    .string()
    .regex(/^#[0-9A-F]{6}$/)
    .nullable()
    .describe('`#RRGGBB` in capitals; null for none.'),
  ...timestamps,
});
export type TagResponse = z.infer<typeof tagResponse>;
