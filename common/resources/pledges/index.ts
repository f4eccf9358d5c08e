import { codeNotes, codeRule } from '../campaigns/recordCoding.js';
import type { ActionDescriptor, ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import {
  cancelPledgeCommand,
  closeShape,
  createPledge,
  updatePledgeCommand,
  writeOffPledgeCommand,
} from './commands.js';
import { pledgeList, receivableList } from './list.js';
import { presentPledge } from './present.js';
import { pledgeReceivableResponse, pledgeResponse } from './response.js';
import { pledgeDefaults, pledgeIdentity, pledgeShape, pledgeTable } from './schema.js';

const writeOff: ActionDescriptor = {
  name: 'write-off',
  happened: 'written_off',
  command: writeOffPledgeCommand,
  shape: closeShape,
  defaults: {},
  text: {
    component: 'PledgeWriteOff',
    summary: 'Write off a pledge',
    description: [
      'Gives up what is left of an open pledge: `status` becomes `written_off`, `amount_written_off` the balance and `balance` 0; `close_reason` and `closed_at` are set. The pledge leaves `pledged_outstanding` (donor giving, fund totals) and the receivables report. Its payments stay as they are.',
      'Only an open pledge can be written off: any other status is 409 `invalid_state_transition`. A written-off pledge takes no payment. If one of its payments is later refunded or voided, the amount given back is written off too (`amount_paid + amount_written_off` stays `amount`).',
      'Answers the pledge as `GET /pledges/{id}` does.',
    ].join('\n\n'),
    notes: { reason: 'Why the rest will not come; at most 500 characters.' },
    conflicts: ['invalid_state_transition'],
    example: { reason: 'The donor’s circumstances changed; agreed with the gift officer.' },
  },
};

const cancel: ActionDescriptor = {
  name: 'cancel',
  happened: 'cancelled',
  command: cancelPledgeCommand,
  shape: closeShape,
  defaults: {},
  text: {
    component: 'PledgeCancel',
    summary: 'Cancel a pledge',
    description: [
      'Withdraws a promise before anything was paid of it: `status` becomes `cancelled`, with `close_reason` and `closed_at`. Its `balance` stays what was promised, for the record, but a cancelled pledge counts in no outstanding figure and takes no payment.',
      'Only an open pledge with `amount_paid` 0 can be cancelled: any other is 409 `invalid_state_transition` (write off the balance of a pledge partly paid).',
      'Answers the pledge as `GET /pledges/{id}` does.',
    ].join('\n\n'),
    notes: { reason: 'Why the promise is withdrawn; at most 500 characters.' },
    conflicts: ['invalid_state_transition'],
    example: { reason: 'Recorded for the wrong donor.' },
  },
};

export const pledges: ResourceDescriptor = {
  ...pledgeIdentity,
  permission: 'gifts',
  shape: pledgeShape,
  defaults: pledgeDefaults,
  response: pledgeResponse,
  commands: { create: createPledge, update: updatePledgeCommand },
  list: pledgeList,
  retrieve: retrieveFrom(pledgeTable, presentPledge),
  actions: [writeOff, cancel],
  // A payment (a gift naming the pledge) that brings the balance to 0.
  consequences: [{ happened: 'fulfilled', by: { method: 'POST', path: '/api/v1/gifts' } }],
  reports: [
    {
      path: '/pledges/receivables',
      list: receivableList,
      item: pledgeReceivableResponse,
      text: {
        tag: 'Pledge reports',
        tagDescription: 'What pledges still owe: the month-end list of a finance team.',
        component: 'PledgeReceivable',
        summary: 'List pledge receivables',
        description:
          'One row per open pledge, newest pledge first: its balance, what of it is overdue today and when the next installment falls due. Fulfilled, written-off and cancelled pledges owe nothing and are not listed. The balances sum to the `pledged_outstanding` of the donors (and, over the funds, of the designated pledges).',
        filterNotes: {
          fund_id: 'Pledges with a designation to this fund.',
          due_before:
            'Pledges with an installment due before this date and not paid in full (e.g. the first day of next month).',
        },
      },
    },
  ],
  text: {
    tag: 'Pledges',
    component: 'Pledge',
    notes: {
      donor_id: 'A donor of the institution: the one who promised, and whose gifts pay it.',
      amount: 'What is promised in all.',
      pledge_date: 'When the promise was made.',
      fund_id:
        'Shorthand for one designation of the whole amount to an open fund of the institution. Not together with `designations`.',
      designations:
        'The split across funds, as on a gift: 1 to 20 parts, each fund once, summing exactly to `amount`, each optionally with its own `campaign_id` and `appeal_id`. `[]` for an undesignated pledge.',
      schedule:
        '`frequency` (`one_time`, `monthly`, `quarterly`, `annually`), `installments` (1 to 120; 1 for `one_time`) and `first_due_on` (not before `pledge_date`).',
      note: 'Free text for the development office; at most 500 characters. May always change.',
      ...codeNotes,
    },
    rules: [
      'A promise to give, paid over time. `donor_id` must name a donor of the institution and each fund an open fund of the institution (422 `reference_not_found` / `reference_inactive`); designations follow the rules of a gift’s (422 `designation_total_mismatch`, `already_in_use`, `not_allowed` for `fund_id` with `designations`).',
      '**Schedule.** The schedule is expanded into `installments`: `schedule.installments` amounts of `amount` split evenly in cents, the cents left over on the last, so they sum exactly to `amount` (so `amount` must be at least 0.01 per installment: 422 `out_of_range` at `schedule.installments`). The first is due on `first_due_on` (not before `pledge_date`: `out_of_range`); each next one 1 (`monthly`), 3 (`quarterly`) or 12 (`annually`) months after the first, on the same day of month clamped to the month’s last day (a pledge first due Jan 31 is due Feb 28, or 29 in a leap year, then Mar 31). `one_time` has exactly 1 installment (`invalid_value` otherwise).',
      '**Payments** are gifts that name the pledge in `pledge_id` (`POST /gifts`): of the pledge’s donor (422 `invalid_value` at `pledge_id`), to an open pledge (`invalid_value`), for at most its `balance` (422 `exceeds_pledge_balance` at `amount`). They fill the earliest installments first. A payment without its own `designations` or `fund_id` takes the pledge’s split in proportion, rounded down to the cent per fund with the cents left over on the last fund. Concurrent payments take turns on the pledge: together they never pay more than the balance. Refunding or voiding a payment gives its amount back to the balance (and a fulfilled pledge is open again); so does deleting a payment that was never receipted.',
      '**Figures** (read-only). `amount_paid` is the net amount of the pledge’s payments that are not voided; `balance = amount - amount_paid - amount_written_off`. `status`: `open`, `fulfilled` (the balance reached 0), `written_off` (`POST /pledges/{id}/write-off`), `cancelled` (`POST /pledges/{id}/cancel`, only while nothing is paid). Each installment shows `amount_paid` and `status`: `paid`, `overdue` (due before today, not paid in full, of an open pledge), `partially_paid` or `due`. `next_due_on` is the due date of the earliest installment not paid in full and `overdue_amount` what installments due before today still owe; both only while the pledge is open (null and 0 otherwise). Today is the service’s calendar day in UTC (`CLOCK_TODAY` pins it).',
      '**Currency.** A pledge is in its `currency` (default the institution’s base currency) at an `exchange_rate` taken as a gift’s is, on `pledge_date` (the rate sent, else the latest on or before it, else 422 `exchange_rate_missing` on `currency`; sending one in the base currency is `not_allowed`). `amount`, `amount_paid`, `balance` and the installments stay in that currency; a payment must be in it (422 `invalid_value` on `currency`), and one that sends no `currency` takes it. Read-only `base_amount` is `amount` at the pledge’s rate (half-even to the cent), `base_amount_paid` the payments’ net base amounts, each at its own rate, and `base_balance` the `balance` at the pledge’s rate (0 unless open). Outstanding figures sum `base_balance`.',
      '**Outstanding.** An open pledge’s `base_balance` counts in its donor’s `giving.pledged_outstanding` and, split across its designations in proportion to their amounts (rounded down to the cent, the cents left over on the last designation), in each fund’s `totals.pledged_outstanding`. An undesignated pledge counts in no fund. Fulfilled, written-off and cancelled pledges count nowhere.',
      '**Changes.** A PATCH may change anything while the pledge is open and no gift ever named it; the installments are expanded again (a single designation follows a new amount; several need new `designations`). Once a gift names it, or once it is not open, only `note` and the codes may change: any other change is 422 `not_allowed` on that field. `status` changes only through write-off and cancel.',
      codeRule(
        'A new payment that sends neither code takes the pledge’s `campaign_id` and `appeal_id`; one that takes the pledge’s designations takes their codes too. An open pledge’s `base_balance` counts in its campaign’s `pledged_outstanding` (see `GET /campaigns/{id}/progress`).',
      ),
    ].join('\n\n'),
    filterNotes: {
      fund_id: 'Pledges with a designation to this fund.',
      status: '`open`, `fulfilled`, `written_off` or `cancelled`.',
      due_before: 'Open pledges with an installment due before this date and not paid in full.',
    },
    examples: {
      create: {
        donor_id: 1,
        amount: 3000,
        pledge_date: '2026-01-31',
        designations: [
          { fund_id: 1, amount: 2000 },
          { fund_id: 2, amount: 1000 },
        ],
        schedule: { frequency: 'monthly', installments: 12, first_due_on: '2026-01-31' },
      },
      update: { note: 'Prefers to pay by bank transfer at the end of each month.' },
    },
  },
};
