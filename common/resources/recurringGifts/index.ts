import { codeNotes, codeRule } from '../campaigns/recordCoding.js';
import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createRecurringGift, updateRecurringGiftCommand } from './commands.js';
import { recurringGiftList } from './list.js';
import { presentRecurringGift } from './present.js';
import { recurringGiftResponse } from './response.js';
import {
  recurringGiftDefaults,
  recurringGiftIdentity,
  recurringGiftShape,
  recurringGiftTable,
} from './schema.js';

export const recurringGifts: ResourceDescriptor = {
  ...recurringGiftIdentity,
  permission: 'gifts',
  shape: recurringGiftShape,
  defaults: recurringGiftDefaults,
  response: recurringGiftResponse,
  commands: { create: createRecurringGift, update: updateRecurringGiftCommand },
  list: recurringGiftList,
  retrieve: retrieveFrom(recurringGiftTable, presentRecurringGift),
  // A donor becoming deceased pauses its active recurring gifts (constituents.md §3).
  consequences: [{ happened: 'updated', by: { method: 'PATCH', path: '/api/v1/donors/{id}' } }],
  text: {
    tag: 'Recurring gifts',
    component: 'RecurringGift',
    notes: {
      donor_id:
        'A donor of the institution, not deceased (422 `reference_inactive`: a donor becoming deceased pauses its active recurring gifts). It cannot change afterwards (422 `not_allowed`): the payments are this donor’s gifts.',
      amount: 'What each payment is expected to be; payments may differ from it.',
      currency: 'Defaults to the institution’s currency.',
      exchange_rate:
        'Base-currency units for one unit of `currency`: > 0, at most 6 decimal places. Only for a currency other than the base (422 `not_allowed`); without it the rate in effect on `start_on` is taken (422 `exchange_rate_missing` on `currency` when there is none).',
      frequency: 'How often a payment is expected.',
      start_on:
        'The date of the first expected payment; the schedule counts whole periods from it.',
      fund_id:
        'Shorthand for one designation of the whole amount to an open fund of the institution. Not together with `designations`.',
      designations:
        'The split across funds: 1 to 20 parts, each fund once, the amounts summing exactly to `amount`, each optionally with its own `campaign_id` and `appeal_id`. `[]` for undesignated giving.',
      ...codeNotes,
      status:
        'A create may start as `active` (the default) or `paused`; see the state machine above.',
    },
    rules: [
      'A standing instruction (monthly giving, say): recorded here, while the money moves elsewhere (a card processor, a bank). Each payment is recorded as a gift naming the recurring gift in `recurring_gift_id`: a gift of the same donor (422 `invalid_value` otherwise), to a recurring gift that is not cancelled (`invalid_value`). A paused recurring gift still takes payments: money that arrived is recorded. A payment is a gift like any other: it states its own amount, date and designations, refunds and voids apply to it, and `GET /gifts?recurring_gift_id=` lists them.',
      '**States**: `active` → `paused` → `active`, and either → `cancelled`, through PATCH `status`. Any other change of `status` is 409 `invalid_state_transition`. A cancelled recurring gift is final and takes no change at all, not even an empty PATCH (409 `invalid_state_transition`); a new one records renewed giving.',
      'While not cancelled, a PATCH may change `amount`, `currency`, `frequency`, `start_on` and the designations (same rules as a gift’s: each fund once, open and of the institution, the amounts summing exactly to `amount`, else 422 `designation_total_mismatch`; a single designation follows a new `amount`; a fund the recurring gift already has may have closed since). `donor_id` cannot change (422 `not_allowed`). A change of the schedule applies to every date of it, past ones too: `next_expected_on` is recomputed from the new `start_on` and `frequency`.',
      '**Currency.** A recurring gift in a currency other than the base takes an `exchange_rate` as a gift does, on `start_on` (the rate sent, else the latest on or before it, else 422 `exchange_rate_missing` on `currency`; sending one in the base currency is `not_allowed`), and keeps it until a PATCH sends another or changes `currency` or `start_on`. Read-only `base_amount` is `amount` at that rate, rounded half-even to the cent. Its payments are gifts with their own currencies and rates.',
      '**Figures** (read-only, from the payments, so that they always agree with the gifts): `gift_count`, `last_gift_date` and `total_given` (the sum of the payments’ base amounts net of refunds, in the institution’s base currency, each payment at its own rate; a voided payment is no payment, and one recorded before currencies without a rate counts only once given one). The schedule is `start_on`, then one period after another, each counted from `start_on` so that a month end stays a month end (Jan 31 → Feb 28 or 29 → Mar 31). `next_expected_on` is the first date of the schedule after `last_gift_date` (`start_on` before any payment); after a pause it is also on or after the day the recurring gift was resumed, since payments are not expected while paused. It is null once cancelled. `lapsed` is true when the recurring gift is active and today (UTC, or the day `CLOCK_TODAY` pins) is after the date of the schedule that follows `next_expected_on`: the expected payment is more than one period late. A paused or cancelled recurring gift is never lapsed.',
      codeRule(
        'A new payment that sends neither code takes the recurring gift’s `campaign_id` and `appeal_id` (not its designations’ codes: a payment states its own designations).',
      ),
      'There is no DELETE: cancel instead. A donor with a recurring gift (in any status) cannot be deleted (409 `resource_in_use`).',
    ].join('\n\n'),
    conflicts: { update: ['invalid_state_transition'] },
    filterNotes: {
      lapsed:
        '`true`: only lapsed recurring gifts (see `lapsed` above), judged on today’s date at each request; `false`: only those that are not.',
    },
    examples: {
      create: {
        donor_id: 1,
        amount: 50,
        frequency: 'monthly',
        start_on: '2026-12-01',
        designations: [
          { fund_id: 1, amount: 30 },
          { fund_id: 2, amount: 20 },
        ],
      },
      update: { status: 'paused' },
    },
  },
};
