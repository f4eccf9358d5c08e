import { z } from 'zod';
import { calendarDay, recordIdOf, reference, timestamps } from '../responseFields.js';
import { relationshipViewTypes } from './schema.js';

export const relationshipResponse = z.object({
  id: recordIdOf('relationship'),
  object: z.literal('relationship'),
  donor_id: reference('donor'),
  related_donor_id: reference('related donor'),
  type: z
    .enum(relationshipViewTypes)
    .describe(
      'Read as "`donor_id` is TYPE of `related_donor_id`". Listed under the related donor (`GET /donors/{id}/relationships`), the relationship is turned round: that donor is `donor_id` and `type` is the reciprocal (`child_of`, `employer_of`, `has_board_member`, `advised_by`).',
    ),
  starts_on: calendarDay.nullable(),
  ends_on: calendarDay.nullable(),
  is_current: z
    .boolean()
    .describe(
      '`ends_on` is null or not before today (the service’s one clock, `CLOCK_TODAY`). A relationship that has not started yet is current.',
    ),
  note: z.string().nullable(),
  ...timestamps,
});
export type RelationshipResponse = z.infer<typeof relationshipResponse>;
