import { z } from 'zod';
import { recordIdOf, reference, timestamp, timestamps } from '../responseFields.js';
import { matchBases } from './schema.js';

const score = z
  .number()
  .int()
  .describe(
    '100: an email in common; 80: the same name and a phone or postal code in common; 50: the same name only.',
  )
  .meta({ examples: [80] });

const matchedOn = z
  .array(z.enum(matchBases))
  .max(matchBases.length)
  .describe(
    'Every basis that holds, in this order: `email` (an email in common), `name` (the same name), `phone` and `postal_code` (the same name and that in common).',
  );

export const duplicatePairResponse = z.object({
  id: recordIdOf('duplicate pair'),
  object: z.literal('duplicate_pair'),
  donor_id: reference('donor with the lower id'),
  other_donor_id: reference('donor with the higher id'),
  score,
  matched_on: matchedOn,
  dismissed_at: timestamp
    .nullable()
    .describe('When the pair was dismissed (it is then never listed again); null while it is not.'),
  dismiss_reason: z.string().nullable().describe('Why the pair was dismissed.'),
  ...timestamps,
});
export type DuplicatePairResponse = z.infer<typeof duplicatePairResponse>;

export const duplicateCandidateResponse = z.object({
  object: z.literal('duplicate_candidate'),
  donor_id: reference('other donor of the pair'),
  pair_id: reference('duplicate pair (`POST /duplicates/{id}/dismiss` takes it)'),
  score,
  matched_on: matchedOn,
});
export type DuplicateCandidateResponse = z.infer<typeof duplicateCandidateResponse>;
