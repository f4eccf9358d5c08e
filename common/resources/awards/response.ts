import { z } from 'zod';
import { moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { awardStatuses } from './schema.js';

export const awardResponse = z.object({
  id: recordIdOf('award'),
  object: z.literal('award'),
  award_cycle_id: reference('award cycle'),
  scholarship_id: reference('scholarship'),
  student_id: reference('student'),
  amount: moneyAmount,
  status: z.enum(awardStatuses),
  ...timestamps,
});
export type AwardResponse = z.infer<typeof awardResponse>;
