import { donorReports, givingSummaryRead, retentionReport } from '../../reports/index.js';
import { consents } from '../consents/index.js';
import type { ResourceDescriptor, Retrieval } from '../descriptor.js';
import { findRow } from '../table.js';
import { createDonor, deleteDonorCommand, updateDonorCommand } from './commands.js';
import { eligibility } from './eligibility.js';
import { eraseDonorAction } from './erase.js';
import { donorExport } from './export.js';
import { mergeDonorsAction } from './merge.js';
import { donorList } from './list.js';
import { presentDonor } from './present.js';
import { findGivingWithMembers } from './queries.js';
import { donorDetailResponse, donorResponse } from './response.js';
import {
  donorDefaults,
  donorIdentity,
  donorShape,
  donorTable,
  maxHouseholdMembers,
} from './schema.js';

/**
 * A donor with its read-only giving summary; a Household with its members, whose giving it counts.
 * The row and the figures are read side by side: the figures need nothing from the row (only a
 * Household has members), and a read of a missing donor answers 404 whatever they were.
 */
const retrieveDonor: Retrieval = async (db, institutionId, id) => {
  const [row, { giving, memberIds }] = await Promise.all([
    findRow(db, donorTable, institutionId, id),
    findGivingWithMembers(db, institutionId, id),
  ]);
  if (!row) return null;
  return presentDonor(row, giving, row.role === 'Household' ? memberIds : undefined);
};

export const donors: ResourceDescriptor = {
  ...donorIdentity,
  permission: 'donors',
  shape: donorShape,
  defaults: donorDefaults,
  response: donorResponse,
  detail: donorDetailResponse,
  commands: { create: createDonor, update: updateDonorCommand, delete: deleteDonorCommand },
  list: donorList,
  retrieve: retrieveDonor,
  children: [consents],
  reads: [eligibility, givingSummaryRead, donorExport],
  reports: donorReports,
  summaries: [retentionReport],
  actions: [mergeDonorsAction, eraseDonorAction],
  text: {
    tag: 'Donors',
    component: 'Donor',
    notes: {
      role: 'Decides which names are required (see the rules above).',
      first_name: 'Required for an Individual.',
      last_name: 'Required for an Individual and a Household.',
      organization_name:
        'Required for an Organization, Foundation or Corporation; not allowed for an Individual.',
      email: 'Unique per institution, compared case-insensitively (422 `already_in_use`).',
      external_id:
        'The donor’s id in the system its records come from (a spreadsheet, an old CRM): unique per institution, compared exactly (422 `already_in_use`). Imports find donors by it.',
      address: '`country` is an ISO 3166-1 alpha-2 code such as US.',
      assigned_user_id: 'An active user of the institution.',
      status: '`deceased` only for an Individual.',
      tag_ids: 'Tags of the institution, each once, in any order (kept as given); `[]` for none.',
      household_id:
        'Only for an Individual (422 `not_allowed`): a donor of role `Household` of the institution (422 `reference_not_found`; `reference_inactive` when it was merged into another; `invalid_value` when the donor is not a Household, or has ' +
        String(maxHouseholdMembers) +
        ' members already: a household is a family, and `member_ids` stays bounded). `null` leaves the household. Joining or leaving is an update of the member (one `donor.updated` event); the household’s `member_ids` and `giving` follow.',
      deceased_on:
        'The date of death, only with `status` `deceased` (422 `not_allowed` otherwise). An update that moves the donor away from `deceased` clears it.',
      communication_restrictions:
        'A set: each value once (422 `invalid_value` at `communication_restrictions.N`), in any order; stored and answered in the order of the enumeration. `[]` for none.',
      emails:
        'Up to 10 more email addresses, each `{"address", "type", "status"}`: `type` (`home`, `work` or `other`) is required, `status` (`active`, `bounced` or `inactive`) defaults to `active`. An address may not repeat the primary `email` or an earlier entry, compared case-insensitively (422 `already_in_use` at `emails.N.address`). Only the primary `email` is unique across the institution’s donors: a listed address may be another donor’s. An update sends the whole list: it replaces the old one.',
      phones:
        'Up to 10 more phone numbers, each `{"number", "type", "status"}`: `number` at most 40 characters; `type` (`home`, `work`, `mobile` or `other`) is required, `status` (`active` or `inactive`) defaults to `active`. A number may not repeat the primary `phone` or an earlier entry, compared by its digits alone (`+1 (555) 010-0000` repeats `15550100000`): 422 `already_in_use` at `phones.N.number`. An update sends the whole list: it replaces the old one.',
      addresses:
        'Up to 10 more addresses, each with the fields of `address` and `type` (`home`, `work`, `seasonal` or `other`; required), `status` (`active`, `undeliverable` or `inactive`; default `active`) and, for a `seasonal` address only, `seasonal_from` and `seasonal_to` (422 `required` when seasonal, `not_allowed` otherwise): real month-days written `MM-DD` (`02-29` included), both days in the season. A window may span the year end (`12-01` to `02-28`). Addresses are not checked for repeats: a seasonal entry may well be the primary address’s twin. `mailing_address` is chosen from them. An update sends the whole list: it replaces the old one.',
    },
    rules: [
      'Requiredness depends on `role`: an Individual needs `first_name` and `last_name` (and may not have an `organization_name`: 422 `not_allowed`); a Household needs `last_name`; an Organization, Foundation or Corporation needs `organization_name`.',
      '`status` `deceased` applies only to an Individual (422 `invalid_value`).',
      '`email` is optional but unique per institution, case-insensitively: a donor without one has no duplicate protection, so a create without `email` must send an `Idempotency-Key` (400 `idempotency_key_required`).',
      '`assigned_user_id` must name an active user of the institution (422 `reference_not_found` / `reference_inactive`).',
      'A donor becoming `deceased` by an update pauses its active recurring gifts in the same transaction, each announced by its own `recurring_gift.updated` event (paused and cancelled ones stay as they are; a donor already deceased pauses nothing new). A dry run answers the same donor and pauses nothing.',
      '`tag_ids` lists tags of the institution, each once (422 `reference_not_found` / `invalid_value` at `tag_ids.N`).',
      'Contact points: `email`, `phone` and `address` are the primary ones; `emails`, `phones` and `addresses` hold up to 10 others each (see each field). Read-only `mailing_address` is where mail goes today: the first `active` `seasonal` address whose window holds today, else the primary `address`, else null. `GET /donors/{id}/eligibility` says whether the donor may be contacted on a channel.',
      'Merges: `POST /donors/{id}/merge` merges another donor into this one, for good (see it). The merged donor stays as a tombstone, `status` `merged` with `merged_into_id`: it takes no update or delete (409 `donor_merged`), nothing new may name it (422 `reference_inactive`), and lists leave it out unless they filter on `status=merged`. `status` `merged` cannot be written.',
      'Erasure: `POST /donors/{id}/erase` erases the donor’s personal data, for good (see it); `GET /donors/{id}/export` answers everything stored about it. An erased donor is a tombstone as a merged one is, `status` `erased`: it takes no update or delete (409 `donor_merged`), nothing new may name it (422 `reference_inactive`), and lists leave it out unless they filter on `status=erased`. `status` `erased` cannot be written.',
      'Households: an Individual belongs to at most one household through `household_id`. A Household’s `GET` carries read-only `member_ids` (its current members by donor id, ascending) and `giving` that counts the gifts and open pledges of the household and of its current members as one donor’s, each gift once (see `giving`). A Household keeps its role while it has members (409 `resource_in_use`).',
    ].join('\n\n'),
    conflicts: {
      update: ['resource_in_use', 'donor_merged'],
      delete: ['resource_in_use', 'donor_merged'],
    },
    deleteNote:
      'Refused with 409 `resource_in_use` while the donor has gifts or another donor’s gift soft-credits it, once the donor has a recurring gift (in any status) or a giving statement, and while a household has members.',
    filterNotes: {
      q: 'Name, organization name or email contains this text.',
      assigned_user_id: 'Donors assigned to this user.',
      external_id: 'The donor with this `external_id` (exact match).',
      tag_id: 'Donors that carry this tag.',
      household_id: 'The current members of this household.',
    },
    examples: {
      create: {
        role: 'Individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada.lovelace@example.org',
        phone: '+44 20 7946 0000',
        address: {
          line1: '12 St James Square',
          city: 'London',
          postal_code: 'SW1Y 4JH',
          country: 'GB',
        },
        emails: [{ address: 'ada@analytical-engines.example.org', type: 'work' }],
        gives_anonymously: false,
      },
      update: { phone: '+44 20 7946 0001', gives_anonymously: true },
    },
  },
};
