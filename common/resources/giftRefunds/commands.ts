import {
  previewCreated,
  type Command,
  type CommandContext,
  type WriteRequest,
} from '../../commands/command.js';
import { apiPath, findTarget } from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { centsToNumber, sumCents, toCents } from '../../money.js';
import { requireFields, validateBody, type BodyValidation } from '../../validation/validateBody.js';
import { netCents } from '../gifts/present.js';
import { giftIdentity, giftTable, type DesignationInput, type GiftRow } from '../gifts/schema.js';
import { baseGivenBack } from '../currency.js';
import { readOnlyOf } from '../responseFields.js';
import { presentGift } from '../gifts/present.js';
import { presentGiftRefund } from './present.js';
import { recordRefund } from './queries.js';
import { giftRefundResponse } from './response.js';
import {
  giftRefundDefaults,
  giftRefundShape,
  giftRefundsSegment,
  type GiftRefundFields,
  type RefundDesignation,
} from './schema.js';

const readOnly = readOnlyOf(giftRefundResponse, giftRefundShape);

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/** The refunded gift, locked for the real write: concurrent refunds of one gift take turns. */
const findRefundedGift = (ctx: CommandContext, request: WriteRequest): Promise<GiftRow> =>
  findTarget(ctx, request, { table: giftTable, identity: giftIdentity });

/**
 * What each fund gives back (giving.md §3). Omitted, it follows from the gift's split when that
 * leaves no choice: nothing for an undesignated gift, the whole refund for a gift with one
 * designation. Sent, each part names one of the gift's funds, once, within what that fund still
 * holds of the gift, and the parts sum to the refund. Null when it cannot be judged.
 */
function refundDesignations(
  gift: GiftRow,
  validation: BodyValidation,
  amount: number | null,
): RefundDesignation[] | null {
  const parts = gift.designations;
  if (!validation.sent.has('designations')) {
    if (parts.length === 0) return [];
    if (parts.length === 1)
      return amount === null ? null : [{ fund_id: parts[0]!.fund_id, amount }];
    validation.errors.push(
      problem(
        'designations',
        'required',
        'is required when the gift has more than one designation: say what each fund gives back',
      ),
    );
    return null;
  }
  if (validation.invalid.has('designations')) return null;
  const sent = validation.values.designations as DesignationInput[];
  const holds = new Map(
    parts.map((part) => [part.fund_id, toCents(part.amount) - toCents(part.amount_refunded)]),
  );
  const seen = new Set<number>();
  sent.forEach((part, index) => {
    const at = `designations.${index}`;
    const held = holds.get(part.fund_id);
    if (held === undefined)
      validation.errors.push(
        problem(
          `${at}.fund_id`,
          'invalid_value',
          'names a fund that is not one of the gift’s designations',
        ),
      );
    else if (seen.has(part.fund_id))
      validation.errors.push(
        problem(`${at}.fund_id`, 'already_in_use', 'names a fund that another designation names'),
      );
    else if (toCents(part.amount) > held)
      validation.errors.push(
        problem(
          `${at}.amount`,
          'out_of_range',
          `must not be more than the fund still holds of this gift (${centsToNumber(held)})`,
        ),
      );
    seen.add(part.fund_id);
  });
  if (parts.length && amount !== null) {
    const total = sumCents(sent.map((part) => part.amount));
    if (total !== toCents(amount))
      validation.errors.push(
        problem(
          'designations',
          'designation_total_mismatch',
          `must sum to the refund’s amount of ${amount}, not ${centsToNumber(total)}`,
        ),
      );
  }
  return sent.map((part) => ({ fund_id: part.fund_id, amount: part.amount }));
}

/** Every rule of a refund of this gift; 422 with every problem found. */
function judgeRefund(gift: GiftRow, body: JsonObject): GiftRefundFields {
  const validation = validateBody(giftRefundShape, body, readOnly);
  const record: Record<string, unknown> = { ...giftRefundDefaults, ...validation.values };
  requireFields(record, ['amount', 'refund_date'], validation);
  const valid = (name: string) =>
    !validation.invalid.has(name) && record[name] !== undefined && record[name] !== null;
  const amount = valid('amount') ? (record.amount as number) : null;
  // As a receipt's gift_id naming a voided gift is invalid_value: one answer for "this gift
  // takes no more money history". The rules on what the gift still holds would only repeat it.
  const voided = gift.status === 'voided';
  if (voided)
    validation.errors.unshift(
      problem(
        'gift_id',
        'invalid_value',
        'names a voided gift: it counts for nothing, so nothing of it can be refunded',
      ),
    );
  if (!voided && amount !== null && toCents(amount) > netCents(gift))
    validation.errors.push(
      problem(
        'amount',
        'out_of_range',
        `must not be more than what is left of the gift (its net_amount, ${centsToNumber(netCents(gift))})`,
      ),
    );
  // YYYY-MM-DD strings order as the dates do.
  if (valid('refund_date') && (record.refund_date as string) < gift.gift_date)
    validation.errors.push(
      problem(
        'refund_date',
        'out_of_range',
        `must not be before the gift’s date, ${gift.gift_date}`,
      ),
    );
  const designations = voided ? null : refundDesignations(gift, validation, amount);
  if (validation.errors.length || amount === null || designations === null)
    throw errors.validationFailed(validation.errors);
  return withBaseAmounts(gift, {
    gift_id: gift.id,
    amount,
    base_amount: null,
    refund_date: record.refund_date as string,
    reason: record.reason as string | null,
    designations,
  });
}

/**
 * The refund in the base currency, at the gift's rate (fundraising.md §2): each fund's part as
 * baseGivenBack gives it (the rest of the designation's base amount when it gives back the rest),
 * the refund the sum of its parts; so a gift's refunds sum exactly to its base amount once it
 * is all given back. A gift without a rate gives back nothing it counted.
 */
function withBaseAmounts(gift: GiftRow, refund: GiftRefundFields): GiftRefundFields {
  const rate = gift.exchange_rate;
  if (rate === null || gift.base_amount === null) return refund;
  if (!gift.designations.length) {
    const base = baseGivenBack(
      {
        amount: toCents(gift.amount),
        refunded: toCents(gift.amount_refunded),
        baseAmount: toCents(gift.base_amount),
        baseRefunded: toCents(gift.base_amount_refunded),
      },
      toCents(refund.amount),
      rate,
    );
    return { ...refund, base_amount: centsToNumber(base) };
  }
  const parts = new Map(gift.designations.map((part) => [part.fund_id, part]));
  const designations = refund.designations.map((back) => {
    const part = parts.get(back.fund_id)!;
    const base = baseGivenBack(
      {
        amount: toCents(part.amount),
        refunded: toCents(part.amount_refunded),
        baseAmount: toCents(part.base_amount ?? 0),
        baseRefunded: toCents(part.base_amount_refunded ?? 0),
      },
      toCents(back.amount),
      rate,
    );
    return { ...back, base_amount: centsToNumber(base) };
  });
  const total = sumCents(designations.map((part) => part.base_amount));
  return { ...refund, base_amount: centsToNumber(total), designations };
}

/** POST /gifts/{id}/refunds (giving.md §3). */
export const createGiftRefund: Command = {
  name: 'gift_refunds.create',
  // A bug in the checks above must not give back more than was given: the table refuses it.
  constraints: {
    gifts_amount_refunded_check: problem(
      'amount',
      'out_of_range',
      'must not be more than what is left of the gift',
    ),
  },
  async execute(ctx, request) {
    const gift = await findRefundedGift(ctx, request);
    const fields = judgeRefund(gift, request.body);
    if (ctx.dryRun) return { status: 201, body: presentGiftRefund(previewCreated(ctx, fields)) };
    const { refund, gift: refunded } = await recordRefund(ctx.db, ctx.institution.id, gift, fields);
    // The event is the gift's (`gift.refunded`): the gift as GET answers it after the refund.
    return {
      status: 201,
      body: presentGiftRefund(refund),
      location: `${apiPath(giftIdentity)}/${gift.id}/${giftRefundsSegment}/${refund.id}`,
      eventObject: presentGift(refunded),
    };
  },
};
