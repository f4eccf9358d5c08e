import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import {
  createRelationship,
  deleteRelationshipCommand,
  updateRelationshipCommand,
} from './commands.js';
import { donorRelationships } from './list.js';
import { presentRelationship } from './present.js';
import { relationshipResponse } from './response.js';
import {
  relationshipDefaults,
  relationshipIdentity,
  relationshipShape,
  relationshipTable,
  relationshipTypeTable,
  relationshipTypes,
} from './schema.js';

const roleWords = {
  individuals: 'Individual–Individual',
  individual_and_organization: 'Individual–organization (Organization, Foundation, Corporation)',
  any: 'any–any',
};

const typeTable = [
  '| type | reciprocal | roles (donor_id–related_donor_id) |',
  '|---|---|---|',
  ...relationshipTypes.map(
    (type) =>
      `| \`${type}\` | \`${relationshipTypeTable[type].reciprocal}\` | ${roleWords[relationshipTypeTable[type].roles]} |`,
  ),
].join('\n');

export const relationships: ResourceDescriptor = {
  ...relationshipIdentity,
  permission: 'donors',
  shape: relationshipShape,
  defaults: relationshipDefaults,
  response: relationshipResponse,
  commands: {
    create: createRelationship,
    update: updateRelationshipCommand,
    delete: deleteRelationshipCommand,
  },
  listedUnder: [donorRelationships],
  retrieve: retrieveFrom(relationshipTable, presentRelationship),
  text: {
    tag: 'Relationships',
    component: 'Relationship',
    notes: {
      donor_id:
        'A donor of the institution (422 `reference_not_found`, the same for another institution’s). It cannot change (422 `not_allowed`): a relationship between other donors is another relationship.',
      related_donor_id:
        'Another donor of the institution: the same as `donor_id` is 422 `not_allowed`. It cannot change (422 `not_allowed`).',
      type: 'Read as "`donor_id` is TYPE of `related_donor_id`". A reciprocal (`child_of`, `employer_of`, `has_board_member`, `advised_by`) is not a type one writes (422 `invalid_value`): write the type with the two donors swapped. Roles that do not fit the type: 422 `invalid_value`.',
      ends_on:
        'On or after `starts_on` (422 `out_of_range`). Null: the relationship has not ended.',
      note: 'At most 500 characters.',
    },
    rules: [
      'How two donors are related: a family, an employer, a board, an advisor. One record per relationship, read from both sides: `GET /donors/{id}/relationships` lists a donor’s relationships from that donor’s side, with the reciprocal type where the donor is `related_donor_id`. There is no list of every relationship of the institution.',
      typeTable,
      'An organization role is `Organization`, `Foundation` or `Corporation`; a `Household` is none (it joins others only by `advisor_of` or `other`). Roles that do not fit the type: 422 `invalid_value` on `type`. Roles are judged when the relationship is written.',
      'A relationship is current (`is_current`) while `ends_on` is null or not before today, by the service’s one clock (`CLOCK_TODAY`); one starting in the future is current. Two current relationships of the same type between the same two donors, in either order, are one too many: 422 `already_in_use` on `type` (so "B `parent_of` A" is refused while "A `parent_of` B" is current). An Individual has at most one current `spouse_of` or `partner_of`, on either side: 422 `already_in_use` on `type` (end the first with `ends_on` before adding the next). An ended relationship conflicts with nothing. A PATCH is judged by the same rules, on the relationship as it would be.',
      'A PATCH changes `type`, `starts_on`, `ends_on` and `note`; `donor_id` and `related_donor_id` stay (422 `not_allowed` for another value).',
      'Deleting either donor deletes its relationships in the same transaction; the donor’s `donor.deleted` event stands for them (no `relationship.deleted` event for each).',
    ].join('\n\n'),
    deleteNote: 'Deletes the relationship, from both sides; the donors stay.',
    filterNotes: {},
    examples: {
      create: { donor_id: 1, related_donor_id: 2, type: 'advisor_of', starts_on: '2024-01-15' },
      update: { ends_on: '2026-06-30', note: 'Stepped down in June.' },
    },
  },
};
