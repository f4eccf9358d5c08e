import type { ActionDescriptor, ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { dismissDuplicateCommand } from './commands.js';
import { donorDuplicates, duplicatePairList } from './list.js';
import { presentDuplicatePair } from './present.js';
import { duplicatePairResponse } from './response.js';
import { dismissShape, duplicateIdentity, duplicatePairTable } from './schema.js';

const dismiss: ActionDescriptor = {
  name: 'dismiss',
  happened: 'dismissed',
  command: dismissDuplicateCommand,
  shape: dismissShape,
  defaults: {},
  text: {
    component: 'DuplicatePairDismiss',
    summary: 'Dismiss a duplicate pair',
    description: [
      'Records that the two donors are not the same: `dismissed_at` and `dismiss_reason` are set and the pair is never listed again (`GET /duplicates`, `GET /donors/{id}/duplicates`), whatever later writes change in the two records. The pair keeps its row until one of its donors is deleted.',
      'A pair dismissed already is 409 `invalid_state_transition`, and nothing changes. Another institution’s pair is as absent as a missing one (404).',
      'Answers the pair as `GET /duplicates/{id}` does.',
    ].join('\n\n'),
    notes: { reason: 'Why the two donors are not the same; at most 500 characters.' },
    conflicts: ['invalid_state_transition'],
    example: { reason: 'Father and son at the same address.' },
  },
};

/**
 * Candidate duplicate donors (constituents.md §5, matching): pairs made and unmade by the
 * triggers on donors in each donor write's own transaction; the API reads them and dismisses
 * them.
 */
export const duplicates: ResourceDescriptor = {
  ...duplicateIdentity,
  permission: 'donors',
  shape: {},
  defaults: {},
  response: duplicatePairResponse,
  commands: {},
  list: duplicatePairList,
  listedUnder: [donorDuplicates],
  retrieve: retrieveFrom(duplicatePairTable, presentDuplicatePair),
  actions: [dismiss],
  text: {
    tag: 'Duplicates',
    component: 'DuplicatePair',
    notes: {},
    rules: [
      'Two donors that may be one person or organisation, found by one rule, the same for every way a donor is written (the API, imports). Two donors of the same role class (individuals; households; the organization roles `Organization`, `Foundation` and `Corporation` together) are a candidate pair when they have in common:',
      '| what | score | `matched_on` |\n|---|---|---|\n| an email, primary or listed (`emails`) | 100 | `email` |\n| the name and a phone, primary or listed (`phones`) | 80 | `name`, `phone` |\n| the name and a postal code, of `address` or of a listed address (`addresses`) | 80 | `name`, `postal_code` |\n| the name only | 50 | `name` |',
      'The score is that of the strongest basis; `matched_on` lists every basis that holds (`["email", "name", "phone"]`). The name is `first_name` and `last_name` for an Individual or a Household, `organization_name` for an organization role. Names are compared with accents removed (a letter with a combining accent compares as the letter: é as e, Å as A; letters such as ø or ß stay themselves), in lower case, with surrounding spaces and repeated spaces inside ignored. Emails are compared in lower case, phones by their digits alone (`+1 555 0100` and `555-0100` differ), postal codes by their letters and digits in lower case. Inactive, bounced and undeliverable contact points count: a donor who moved is still the same donor.',
      'Pairs are kept current by the donor writes themselves, in their own transaction (no nightly batch): a create, update or delete of a donor, however it is made, that makes or breaks a match shows in the next read. A pair keeps its `id` while the two donors match; a pair that stops matching is gone, and one that matches again later is a new pair. `donor_id` is always the lower id of the two.',
      'Merged and erased donors are never candidates. A dismissed pair (`POST /duplicates/{id}/dismiss`) is never listed again.',
      'Pairs are listed highest `score` first, then newest first. Another institution’s pairs are as absent as missing ones (404).',
    ].join('\n\n'),
    filterNotes: {
      min_score:
        'Pairs of at least this score, a whole number from 0 to 100 (`80`: email, or name with phone or postal code).',
    },
    examples: {},
  },
};
