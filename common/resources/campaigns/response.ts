import { z } from 'zod';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { campaignStatuses } from './schema.js';

export const campaignResponse = z.object({
  id: recordIdOf('campaign'),
  object: z.literal('campaign'),
  name: z.string(),
  code: z.string(),
  parent_id: reference('campaign').nullable().describe('The campaign above; null at the top.'),
  starts_on: calendarDay.nullable(),
  ends_on: calendarDay.nullable(),
  goal: moneyAmount
    .nullable()
    .describe('What the campaign means to raise, in the base currency; null for no goal.'),
  status: z.enum(campaignStatuses),
  ...timestamps,
});
export type CampaignResponse = z.infer<typeof campaignResponse>;
