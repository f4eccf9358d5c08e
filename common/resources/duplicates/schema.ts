import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

export const duplicateIdentity: ResourceIdentity = {
  name: 'duplicates',
  object: 'duplicate_pair',
  label: 'duplicate pair',
  path: '/duplicates',
};

/** What two donors have in common, in the order `matched_on` lists them. */
export const matchBases = ['email', 'name', 'phone', 'postal_code'] as const;

/** Candidates shown beside each donor row of an import; the donor's own list has them all. */
export const MAX_IMPORT_ROW_CANDIDATES = 20;

/** A dismissal says why: the next person to look at the pair reads it. */
export const dismissShape: Shape = { reason: { schema: text(500), required: true } };

const duplicatePairRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  other_donor_id: z.number(),
  // numeric, read as text: the list's sort value compares it with its index as it is stored.
  score: z.string(),
  matched_on: z.array(z.enum(matchBases)),
  dismissed_at: z.string().nullable(),
  dismiss_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DuplicatePairRow = z.infer<typeof duplicatePairRow>;

/** Pairs are written by the triggers on donors; the API only reads them and dismisses them. */
export const duplicatePairTable: Table<DuplicatePairRow, object> = {
  name: 'duplicate_pairs',
  row: duplicatePairRow,
  readAs: {
    matched_on: sql.fragment`to_jsonb(matched_on)`,
  },
};
