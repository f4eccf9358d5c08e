import { z } from 'zod';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { appealChannels, appealStatuses } from './schema.js';

export const appealResponse = z.object({
  id: recordIdOf('appeal'),
  object: z.literal('appeal'),
  name: z.string(),
  code: z.string(),
  campaign_id: reference('campaign').nullable().describe('The campaign of the appeal, or null.'),
  channel: z.enum(appealChannels),
  starts_on: calendarDay.nullable(),
  ends_on: calendarDay.nullable(),
  cost: moneyAmount.nullable().describe('What the appeal cost to run; null when not recorded.'),
  status: z.enum(appealStatuses),
  ...timestamps,
});
export type AppealResponse = z.infer<typeof appealResponse>;
