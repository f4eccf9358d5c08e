import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { issueGivingStatementCommand } from './commands.js';
import { givingStatementDocument } from './document.js';
import { givingStatementList } from './list.js';
import { presentGivingStatement } from './present.js';
import { givingStatementResponse } from './response.js';
import {
  givingStatementDefaults,
  givingStatementIdentity,
  givingStatementShape,
  givingStatementTable,
} from './schema.js';

export const givingStatements: ResourceDescriptor = {
  ...givingStatementIdentity,
  permission: 'gifts',
  shape: givingStatementShape,
  defaults: givingStatementDefaults,
  response: givingStatementResponse,
  // A statement is a document sent to a donor: never edited or deleted, only superseded.
  commands: { create: issueGivingStatementCommand },
  createdAs: 'issued',
  list: givingStatementList,
  retrieve: retrieveFrom(givingStatementTable, presentGivingStatement),
  document: givingStatementDocument,
  text: {
    tag: 'Giving statements',
    component: 'GivingStatement',
    notes: {
      donor_id:
        'A donor of the institution, not merged, with at least one gift that counts in the period.',
      year: 'The calendar year, or with `period` `fiscal` the fiscal year, named by the calendar year it ends in (`2027`). A year from 1001 to 9998 that has begun.',
      period:
        '`calendar` (January to December) or `fiscal` (the institution’s `fiscal_year_start_month`).',
    },
    rules: [
      'Year-end giving statements (fundraising.md §6): one document per donor and period listing what the donor gave, net of refunds, with the deductible part. See docs/giving-statements.md.',
      '**What counts** is what the reports count (fundraising.md §5): the donor’s own gifts (hard credit) dated in the period, not voided, with a base amount net of refunds above 0. Soft credits, pledge commitments (their payments are gifts and count), voided and fully refunded gifts are not lines. Each line states the gift’s `amount` net of refunds in its own currency, its `benefit_amount` and `deductible_amount` (`amount - benefit_amount`, 0 when negative, and always 0 for an in-kind gift); `totals` add them up per currency and `base_total` adds up the lines’ base amounts net of refunds, in the base currency.',
      '**Numbering**: `number` is `<year>-<n>`, n counting the institution’s statements of that year 1, 2, 3, … in the order of issue, with no gap and no number used twice, whatever runs concurrently or fails (taken inside the issue’s own transaction, as a receipt’s number is). A dry run answers `<year>-0` and `id` 0.',
      '**Re-issue**: a second statement for the same donor, `period` and `year` supersedes the first, which becomes `superseded` with `superseded_by_id`. A statement is frozen at issue: `donor_name` and `donor_address` (the donor’s `mailing_address`) and every line are copied, and a later change of a gift or of the donor changes no issued statement. Issue a new one to state the change.',
      '**Refused** (422 `validation_failed`): `donor_id` of no donor of the institution (`reference_not_found`, as for another institution’s donor) or of a merged donor (`invalid_value`); a `year` out of range or whose period begins after today (`out_of_range`); a `period` other than `calendar` or `fiscal` (`invalid_value`); a donor with no gift that counts in the period (`nothing_counted` on `donor_id`).',
    ].join('\n\n'),
    filterNotes: {
      donor_id: 'Statements of this donor.',
      year: 'Statements of this year (calendar or fiscal, as each statement’s `period` says).',
      status: '`issued` or `superseded`.',
    },
    examples: { create: { donor_id: 1, year: 2026, period: 'calendar' } },
  },
};
