import { z } from 'zod';
import { calendarDay, recordIdOf, timestamps } from '../responseFields.js';
import { awardCycleStatuses } from './schema.js';

export const awardCycleResponse = z.object({
  id: recordIdOf('award cycle'),
  object: z.literal('award_cycle'),
  name: z.string(),
  starts_on: calendarDay,
  ends_on: calendarDay,
  status: z.enum(awardCycleStatuses),
  ...timestamps,
});
export type AwardCycleResponse = z.infer<typeof awardCycleResponse>;
