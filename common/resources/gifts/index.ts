import { codeNotes, codeRule } from '../campaigns/recordCoding.js';
import type { ResourceDescriptor } from '../descriptor.js';
import { giftRefunds } from '../giftRefunds/index.js';
import { retrieveFrom } from '../table.js';
import { createGift, deleteGiftCommand, updateGiftCommand } from './commands.js';
import { giftList } from './list.js';
import { presentGift } from './present.js';
import { giftResponse } from './response.js';
import { giftDefaults, giftIdentity, giftShape, giftTable } from './schema.js';
import { acknowledgeTributeAction } from './tributeAcknowledgement.js';
import { voidGiftAction } from './void.js';

export const gifts: ResourceDescriptor = {
  ...giftIdentity,
  permission: 'gifts',
  shape: giftShape,
  defaults: giftDefaults,
  response: giftResponse,
  commands: { create: createGift, update: updateGiftCommand, delete: deleteGiftCommand },
  list: giftList,
  retrieve: retrieveFrom(giftTable, presentGift),
  actions: [voidGiftAction, acknowledgeTributeAction],
  children: [giftRefunds],
  text: {
    tag: 'Gifts',
    component: 'Gift',
    notes: {
      donor_id: 'A donor of the institution: the one with the hard credit.',
      recurring_gift_id:
        'Makes the gift a payment of this recurring gift: one of the institution, of the same donor, not cancelled (a gift keeps its link once the recurring gift is cancelled). May be set, changed or cleared (null) by PATCH, even on a locked gift.',
      currency: 'Defaults to the institution’s currency.',
      exchange_rate:
        'Base-currency units for one unit of `currency`: > 0, at most 6 decimal places. Only for a currency other than the base (422 `not_allowed`); without it the rate in effect on `gift_date` is taken (422 `exchange_rate_missing` on `currency` when there is none).',
      check_number: 'Only when `type` is `check`.',
      fund_id:
        'Shorthand for one designation of the whole amount to an open fund of the institution. Not together with `designations`.',
      designations:
        'The split across funds: 1 to 20 parts, each fund once, the amounts summing exactly to `amount`, each optionally with its own `campaign_id` and `appeal_id`. `[]` for an undesignated gift.',
      soft_credits:
        'Recognition without ownership: up to 20 other donors of the institution, each once, each for at most the gift’s amount.',
      matches_gift_id:
        'The gift this one matches (an employer’s match): a gift of the institution, by another donor, not voided, that fewer than 20 gifts match.',
      benefit_amount:
        'Fair market value of goods or services the donor received (a gala dinner); at most `amount`. A receipt deducts it.',
      pledge_id:
        'Makes the gift a payment of this pledge: an open pledge of the same donor, for at most its balance (422 `exceeds_pledge_balance` at `amount`).',
      ...codeNotes,
      type: 'How the gift was paid. `pledge` is deprecated: name the pledge in `pledge_id`.',
      tribute:
        'In honour or in memory of someone: `type` (`in_honor_of`, `in_memory_of`), `honoree_name` (at most 200 characters), optionally `honoree_donor_id` (a donor of the institution), `notify` (`name`, and an `email` or a postal `address` shaped as a donor’s, with its `line1`) and `message` (at most 1000 characters). A PATCH replaces the whole tribute; null removes it. `acknowledgement` and `sent_on` are read-only.',
    },
    rules: [
      '`donor_id` must name a donor of the institution and each fund an open fund of the institution (422 `reference_not_found` / `reference_inactive`, at `fund_id` or `designations.N.fund_id`). A fund the gift already has may have closed since: it stays valid on this gift.',
      '**Designations** split a gift across funds. Their amounts sum exactly to `amount` (422 `designation_total_mismatch` on `designations`); a fund appears once (`already_in_use` at `designations.N.fund_id`). `fund_id` is the shorthand for one designation of the whole amount; sending both is `not_allowed` on `fund_id`. Responses carry both: `designations` (possibly `[]`) and `fund_id` (the fund when there is exactly one designation, else null). A PATCH of `amount` moves a single designation with it; a gift split in several needs new `designations` with the new amount. Fund totals, `GET /gifts?fund_id=` and the reports read designations.',
      '**Soft credits** recognise other donors (a spouse, a solicitor, a donor-advised fund’s advisor, the employee whose gift a company matched). Never the gift’s own donor (`not_allowed`), each donor once (`already_in_use`), each at most `amount` (`out_of_range`). They count in the credited donor’s `giving.soft_credit_total` in proportion to what is left of the gift, in the base currency (the credit’s `base_amount` × the gift’s `base_amount` net of refunds / its `base_amount`, rounded down to the cent: 0 once the gift is refunded in full or voided), never in fund totals or hard-credit totals.',
      '**Matching gifts** name the gift they match in `matches_gift_id` (a gift of another donor, not voided: 422 `invalid_value`); the matched gift lists them in `matched_by_gift_ids`. A match adds no soft credit by itself.',
      '**Money history is append-only.** `status`, `amount_refunded` and `net_amount` change only through refunds (`POST /gifts/{id}/refunds`) and voids (`POST /gifts/{id}/void`). A gift with an issued receipt, a refund or a void is locked: a PATCH that changes `amount`, `donor_id`, `gift_date`, `currency`, `exchange_rate`, `designations`, `benefit_amount` or `pledge_id` is 409 `gift_locked` (other fields may change), and DELETE is 409 `gift_locked` once the gift was ever receipted, refunded or voided: void it instead. A gift that other gifts match cannot be deleted (409 `resource_in_use`).',
      '**Pledge payments** name their pledge in `pledge_id`: a pledge of the institution (422 `reference_not_found`) of the same donor (`invalid_value`) that is open (`invalid_value`), for at most its balance, counting what this gift already paid of it (422 `exceeds_pledge_balance` at `amount`). A new payment without `designations` or `fund_id` takes the pledge’s designations in proportion (see Pledges). Refunding, voiding or deleting a payment gives its amount back to the pledge’s balance. `pledge_id` is money: a receipted, refunded or voided payment keeps it (409 `gift_locked`).',
      '`check_number` is allowed only when `type` is `check` (422 `not_allowed`). `currency` defaults to the institution’s currency.',
      '**Currencies** (fundraising.md §2). A gift in a currency other than the institution’s base currency takes the `exchange_rate` sent, else the latest exchange rate (`POST /exchange-rates`) with `effective_on` on or before `gift_date`; with none, 422 `exchange_rate_missing` on `currency`. In the base currency `exchange_rate` is 1 and sending it is 422 `not_allowed`. The rate is kept: adding or deleting an exchange rate later changes no gift, and a PATCH keeps it unless it sends `exchange_rate` or changes `currency` or `gift_date` (which looks the rate up again); a new `amount` keeps the rate. Read-only `base_amount` is `amount` × `exchange_rate` rounded half-even to the cent; each designation and soft credit has its `base_amount` (designations apportioned so they sum exactly to the gift’s, the remainder on the last; a soft credit at the rate, at most the gift’s), and so has each refund. Every total (donor giving, soft credits, fund totals, a recurring gift’s `total_given`, pledges’ figures) sums base amounts. A gift recorded before currencies in another currency has `exchange_rate` and `base_amount` null and counts in no total until a PATCH sends its `exchange_rate`; one with refunds cannot be given a rate (409 `gift_locked`: void it and record it again).',
      '**Payments of a recurring gift** name it in `recurring_gift_id`: a recurring gift of the institution (422 `reference_not_found`) and of the gift’s own donor (`invalid_value`, also when a PATCH changes the donor of a payment), not cancelled when the gift is newly linked to it (`invalid_value`); a paused one still takes payments. A payment takes no designation from its recurring gift: it states its own. Its `net_amount` counts in the recurring gift’s `total_given`, and its `gift_date` in `last_gift_date` and `next_expected_on`, unless it is voided.',
      '**Tributes** (a gift in honour or in memory of someone) are not money: `tribute` may be set, changed or removed by PATCH, even on a receipted or voided gift. `honoree_donor_id` must name a donor of the institution (422 `reference_not_found`; a deceased donor is fine); deleting that donor later leaves the tribute with its `honoree_name` only. `notify` needs a `name` and an `email` or an `address` (422 `required` at `tribute.notify`). The honoree gets no credit by itself: add a soft credit with reason `tribute` for that. `tribute.acknowledgement` is `pending` when the tribute has `notify` and `not_required` otherwise, until `POST /gifts/{id}/tribute-acknowledgement` makes it `sent` (with `sent_on`). A PATCH of the tribute keeps a `sent` acknowledgement and its `sent_on` as they are; otherwise the acknowledgement follows `notify` (adding it makes `pending`, removing it `not_required`). A tribute set to null takes its acknowledgement with it.',
      codeRule(
        'A new payment of a pledge or a recurring gift that sends neither code takes the record-level codes of its pledge or recurring gift; a pledge payment that takes its pledge’s designations takes their codes too. A gift’s codes are kept on its lines for `GET /gifts?campaign_id=&appeal_id=`, campaign progress and appeal results.',
      ),
    ].join('\n\n'),
    conflicts: { update: ['gift_locked'], delete: ['gift_locked', 'resource_in_use'] },
    deleteNote:
      'Only a gift with no money history: never receipted, refunded or voided (else 409 `gift_locked`; void it instead), and matched by no other gift.',
    filterNotes: {
      fund_id: 'Gifts with a designation to this fund.',
      recurring_gift_id: 'The payments of this recurring gift.',
      soft_credit_donor_id: 'Gifts that soft-credit this donor.',
      campaign_id:
        'Gifts with a line coded to this campaign: a designation’s own code, else the gift’s; a line coded only to an appeal counts toward the appeal’s campaign. This campaign exactly, not the campaigns below it.',
      appeal_id: 'Gifts with a line coded to this appeal (a designation’s own, else the gift’s).',
      matches_gift_id: 'Gifts that match this gift.',
      tribute_acknowledgement:
        'Gifts with a tribute whose acknowledgement is in this state (`pending`: the notifications still to send).',
      q: 'The subject contains this text.',
      gift_date_from: 'Gifts on or after this date.',
      gift_date_to: 'Gifts on or before this date.',
    },
    examples: {
      create: {
        donor_id: 1,
        amount: 250,
        subject: 'Annual fund 2026',
        gift_date: '2026-11-24',
        type: 'credit_card',
        designations: [
          { fund_id: 1, amount: 150 },
          { fund_id: 2, amount: 100 },
        ],
        soft_credits: [{ donor_id: 2, amount: 250, reason: 'household' }],
        tribute: {
          type: 'in_memory_of',
          honoree_name: 'Grace Hopper',
          notify: { name: 'The Hopper family', email: 'family@example.org' },
          message: 'With fond memories of the class of 1928.',
        },
      },
      update: { subject: 'Annual fund 2026, in memory of a classmate' },
    },
  },
};
