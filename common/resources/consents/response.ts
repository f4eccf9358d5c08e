import { z } from 'zod';
import { recordIdOf, reference, timestamp, timestamps } from '../responseFields.js';
import { consentChannels, consentResponses } from './schema.js';

// Append-only: a consent never changes, so it has no `updated_at`.
export const consentResponse = z.object({
  id: recordIdOf('consent'),
  object: z.literal('consent'),
  donor_id: reference('donor'),
  channel: z.enum(consentChannels),
  purpose: z.string().nullable(),
  response: z.enum(consentResponses),
  source: z.string(),
  statement: z.string().nullable(),
  captured_at: timestamp.describe('When the donor gave this answer.'),
  created_at: timestamps.created_at,
});
export type ConsentResponse = z.infer<typeof consentResponse>;
