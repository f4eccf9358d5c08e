import type { z } from 'zod';
import { awardCycleDefaults, awardCycleShape } from '../resources/awardCycles/schema.js';
import { awardCycleResponse } from '../resources/awardCycles/response.js';
import { awardDefaults, awardShape } from '../resources/awards/schema.js';
import { awardResponse } from '../resources/awards/response.js';
import { donorDefaults, donorShape } from '../resources/donors/schema.js';
import { donorDetailResponse, donorResponse } from '../resources/donors/response.js';
import { fundDefaults, fundShape } from '../resources/funds/schema.js';
import { fundDetailResponse, fundResponse } from '../resources/funds/response.js';
import { giftDefaults, giftShape } from '../resources/gifts/schema.js';
import { giftResponse } from '../resources/gifts/response.js';
import {
  awardedStudentResponse,
  fundSummaryResponse,
  scholarshipResponse,
} from '../resources/scholarships/response.js';
import { scholarshipDefaults, scholarshipShape } from '../resources/scholarships/schema.js';
import { studentDefaults, studentShape } from '../resources/students/schema.js';
import { studentResponse } from '../resources/students/response.js';
import { userDefaults, userShape } from '../resources/users/schema.js';
import { userResponse } from '../resources/users/response.js';
import type { ErrorCode } from './errorCatalogue.js';
import type { BodyDoc } from './requestBody.js';

/**
 * What the document says of each resource beyond what the code already tells it: the request
 * bodies come from each Shape, the responses from each response.ts; here are the names, the
 * prose of the rules that span fields, and the 409s particular to a resource.
 */
export interface ResourceDoc extends BodyDoc {
  /** The command name prefix (`donors` of `donors.create`). */
  name: string;
  /** The collection path, as its list's endpoint. */
  path: string;
  /** As retrieve routes name it (`award cycle`). */
  label: string;
  tag: string;
  /** Component schema name (`AwardCycle`, `AwardCycleCreate`, ...). */
  component: string;
  response: z.ZodType;
  /** GET /things/{id}, where it returns more than the other operations. */
  detail?: z.ZodType;
  /** Rules across fields and state machines, for create and update. */
  rules: string;
  /** 409 codes particular to the resource, by operation. */
  conflicts?: { update?: ErrorCode[]; delete?: ErrorCode[] };
  deleteNote?: string;
  /** Notes on list filters, by filter name. */
  filterNotes: Record<string, string>;
}

const uniqueEmail = 'Unique per institution, compared case-insensitively (422 `already_in_use`).';

export const resourceDocs: readonly ResourceDoc[] = [
  {
    name: 'donors',
    path: '/api/v1/donors',
    label: 'donor',
    tag: 'Donors',
    component: 'Donor',
    shape: donorShape,
    defaults: donorDefaults,
    response: donorResponse,
    detail: donorDetailResponse,
    notes: {
      role: 'Decides which names are required (see the rules above).',
      first_name: 'Required for an Individual.',
      last_name: 'Required for an Individual and a Household.',
      organization_name:
        'Required for an Organization, Foundation or Corporation; not allowed for an Individual.',
      email: uniqueEmail,
      address: '`country` is an ISO 3166-1 alpha-2 code such as US.',
      assigned_user_id: 'An active user of the institution.',
      status: '`deceased` only for an Individual.',
    },
    rules: [
      'Requiredness depends on `role`: an Individual needs `first_name` and `last_name` (and may not have an `organization_name`: 422 `not_allowed`); a Household needs `last_name`; an Organization, Foundation or Corporation needs `organization_name`.',
      '`status` `deceased` applies only to an Individual (422 `invalid_value`).',
      '`email` is optional but unique per institution, case-insensitively: a donor without one has no duplicate protection, so a create without `email` must send an `Idempotency-Key` (400 `idempotency_key_required`).',
      '`assigned_user_id` must name an active user of the institution (422 `reference_not_found` / `reference_inactive`).',
    ].join('\n\n'),
    conflicts: { delete: ['resource_in_use'] },
    deleteNote: 'Refused with 409 `resource_in_use` while the donor has gifts.',
    filterNotes: {
      q: 'Name, organization name or email contains this text.',
      assigned_user_id: 'Donors assigned to this user.',
    },
  },
  {
    name: 'gifts',
    path: '/api/v1/gifts',
    label: 'gift',
    tag: 'Gifts',
    component: 'Gift',
    shape: giftShape,
    defaults: giftDefaults,
    response: giftResponse,
    notes: {
      donor_id: 'A donor of the institution.',
      currency: 'Defaults to the institution’s currency.',
      check_number: 'Only when `type` is `check`.',
      fund_id: 'The designation: an active fund of the institution.',
    },
    rules: [
      '`donor_id` must name a donor of the institution and `fund_id` an active fund (422 `reference_not_found` / `reference_inactive`).',
      '`check_number` is allowed only when `type` is `check` (422 `not_allowed`).',
      '`currency` defaults to the institution’s currency.',
    ].join('\n\n'),
    filterNotes: {
      q: 'The subject contains this text.',
      gift_date_from: 'Gifts on or after this date.',
      gift_date_to: 'Gifts on or before this date.',
    },
  },
  {
    name: 'funds',
    path: '/api/v1/funds',
    label: 'fund',
    tag: 'Funds',
    component: 'Fund',
    shape: fundShape,
    defaults: fundDefaults,
    response: fundResponse,
    detail: fundDetailResponse,
    notes: {
      code: 'Unique per institution (422 `already_in_use`).',
      award_limit:
        'The most that live awards may draw from the fund, at most 2 decimal places; null for no limit. Lowering it below what live awards commit: 422 `insufficient_fund_balance`.',
      status: 'A closed fund takes no new gifts or scholarships.',
    },
    rules: [
      '`code` is unique per institution.',
      '`award_limit` caps what live awards (offered, accepted, disbursed) may draw from the fund; an update that lowers it below what they already commit is 422 `insufficient_fund_balance` on `award_limit`.',
      'A `closed` fund takes no new gifts or scholarships.',
    ].join('\n\n'),
    filterNotes: { q: 'The name or code contains this text.' },
  },
  {
    name: 'users',
    path: '/api/v1/users',
    label: 'user',
    tag: 'Users',
    component: 'User',
    shape: userShape,
    defaults: userDefaults,
    response: userResponse,
    notes: { email: uniqueEmail, status: 'A deactivated user cannot be assigned donors.' },
    rules: 'Staff who are assigned donors. `email` is unique per institution, case-insensitively.',
    filterNotes: { q: 'The name or email contains this text.' },
  },
  {
    name: 'award_cycles',
    path: '/api/v1/award-cycles',
    label: 'award cycle',
    tag: 'Award cycles',
    component: 'AwardCycle',
    shape: awardCycleShape,
    defaults: awardCycleDefaults,
    response: awardCycleResponse,
    notes: {
      name: 'Unique per institution (422 `already_in_use`).',
      ends_on: 'On or after `starts_on` (422 `out_of_range`).',
      status: 'A create may start as `draft` or `open`; see the state machine above.',
    },
    rules: [
      'States: `draft` (the default; a create may also say `open`) → `open` → `closed` → `archived`; also `closed` → `open` (reopen) and `draft` → `archived` (discard). Any other change of `status` is 409 `invalid_state_transition`.',
      'An archived cycle takes no change at all: 409 `resource_archived`.',
      '`ends_on` must be on or after `starts_on`; `name` is unique per institution.',
    ].join('\n\n'),
    conflicts: { update: ['invalid_state_transition', 'resource_archived'] },
    filterNotes: { q: 'The name contains this text.' },
  },
  {
    name: 'students',
    path: '/api/v1/students',
    label: 'student',
    tag: 'Students',
    component: 'Student',
    shape: studentShape,
    defaults: studentDefaults,
    response: studentResponse,
    notes: { student_number: 'Unique per institution (422 `already_in_use`).' },
    rules: '`student_number` is unique per institution.',
    filterNotes: { q: 'The full name, student number or email contains this text.' },
  },
  {
    name: 'scholarships',
    path: '/api/v1/scholarships',
    label: 'scholarship',
    tag: 'Scholarships',
    component: 'Scholarship',
    shape: scholarshipShape,
    defaults: scholarshipDefaults,
    response: scholarshipResponse,
    notes: {
      fund_id: 'An active fund of the institution: the scholarship’s awards draw from it.',
      status: 'A retired scholarship takes no new awards.',
    },
    rules: [
      '`fund_id` must name an active fund of the institution (422 `reference_not_found` / `reference_inactive`).',
      'Moving a scholarship to another fund moves what its live awards commit: 422 `insufficient_fund_balance` on `fund_id` when the new fund’s `award_limit` cannot take it.',
    ].join('\n\n'),
    filterNotes: { q: 'The name contains this text.' },
  },
  {
    name: 'awards',
    path: '/api/v1/awards',
    label: 'award',
    tag: 'Awards',
    component: 'Award',
    shape: awardShape,
    defaults: awardDefaults,
    response: awardResponse,
    notes: {
      award_cycle_id: 'A cycle in status `open` or `closed` (else 422 `invalid_value`).',
      scholarship_id: 'An active scholarship (else 422 `reference_inactive`).',
      student_id: 'A student of the institution.',
      amount: 'Drawn from the scholarship’s fund: see the fund limit rule above.',
      status: 'A create starts as `offered`; see the state machine above.',
    },
    rules: [
      'A student awarded a scholarship in a cycle. States: `offered` (the only one a create may send) → `accepted`, `declined` or `cancelled`; `accepted` → `disbursed` or `cancelled`. Any other change of `status` is 409 `invalid_state_transition`; an award of an archived cycle takes no change: 409 `resource_archived`.',
      'One live award (status not `declined` or `cancelled`) per cycle, scholarship and student: a second is 422 `already_in_use`.',
      'The live awards drawing from a fund never exceed its `award_limit`, also under concurrent writes: a create or amount increase that would is 422 `insufficient_fund_balance` on `amount`.',
    ].join('\n\n'),
    conflicts: { update: ['invalid_state_transition', 'resource_archived'] },
    filterNotes: {},
  },
];

/** A list that is not a resource's collection: the scholarship reports. */
export interface ReportDoc {
  endpoint: string;
  tag: string;
  component: string;
  item: z.ZodType;
  summary: string;
  description: string;
  filterNotes: Record<string, string>;
}

export const reportDocs: readonly ReportDoc[] = [
  {
    endpoint: '/api/v1/scholarships/awarded-students',
    tag: 'Scholarship reports',
    component: 'AwardedStudent',
    item: awardedStudentResponse,
    summary: 'List awarded students',
    description:
      'One row per award in status `accepted` or `disbursed` in the award cycle, newest award first.',
    filterNotes: {
      award_cycle_id: 'The award cycle reported on.',
      fund_id: 'Awards drawn from this fund.',
      scholarship_id: 'Awards of this scholarship.',
      donor_id:
        'The stewardship report: awards drawn from funds this donor gave gifts to, each award once.',
      q: 'The student’s name or student number contains this text.',
    },
  },
  {
    endpoint: '/api/v1/scholarships/fund-summaries',
    tag: 'Scholarship reports',
    component: 'FundSummary',
    item: fundSummaryResponse,
    summary: 'List fund summaries',
    description:
      'One row per fund with accepted or disbursed awards in the award cycle, newest fund first. A fund’s row is exactly the sum of its rows in awarded-students.',
    filterNotes: { award_cycle_id: 'The award cycle summarised.' },
  },
];
