import { sql } from 'slonik';
import { lockClause, type Command, type CommandContext } from '../../commands/command.js';
import {
  apiPath,
  judgeRecord,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { voidCommand } from '../../commands/voidCommand.js';
import { today } from '../../clock.js';
import { errors, type FieldError } from '../../errors.js';
import { centsToNumber, toCents } from '../../money.js';
import { displayName, presentAddress } from '../donors/present.js';
import { donorTable } from '../donors/schema.js';
import { netCents } from '../gifts/present.js';
import { giftReceipts } from '../gifts/queries.js';
import { readOnlyOf } from '../responseFields.js';
import { findRow } from '../table.js';
import { presentReceipt } from './present.js';
import { findGiftToReceipt, issueReceipt, voidReceipt, type GiftToReceipt } from './queries.js';
import { receiptResponse } from './response.js';
import {
  receiptDefaults,
  receiptIdentity,
  receiptShape,
  receiptTable,
  type ReceiptFields,
  type ReceiptRow,
} from './schema.js';

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/** What a second issue for the same gift, which only a race could let through, means. */
const alreadyReceipted = problem(
  'gift_id',
  'already_in_use',
  'names a gift that has an issued receipt; void that receipt first to issue a new one',
);

const constraints = {
  receipts_one_issued_per_gift: alreadyReceipted,
  receipts_gift_fkey: problem('gift_id', 'reference_not_found', 'does not name an existing gift'),
};

export const receiptsResource: WritableResource<ReceiptRow, ReceiptFields> = {
  identity: receiptIdentity,
  table: receiptTable,
  shape: receiptShape,
  defaults: receiptDefaults,
  readOnly: readOnlyOf(receiptResponse, receiptShape),
  constraints,
  present: presentReceipt,
};

/**
 * The gift a receipt may be issued for: the institution's, not voided, with money left after
 * refunds, without an issued receipt, and given on or before `issued_on`. The real issue holds
 * the gift's row lock from here to its commit, so a concurrent edit, refund or void of the gift
 * (which lock it too) happens wholly before or wholly after the issue. Null when a rule failed.
 */
async function receiptableGift(
  ctx: CommandContext,
  check: RecordCheck<ReceiptRow>,
): Promise<GiftToReceipt | null> {
  const { record, validation, valid } = check;
  if (!valid('gift_id')) return null;
  const gift = await findGiftToReceipt(
    ctx.db,
    ctx.institution.id,
    record.gift_id as number,
    lockClause(ctx),
  );
  const refuse = (code: FieldError['code'], message: string) => {
    validation.errors.push(problem('gift_id', code, message));
    return null;
  };
  if (!gift) return refuse('reference_not_found', 'does not name an existing gift');
  const before = validation.errors.length;
  if (gift.status === 'voided') refuse('invalid_value', 'names a voided gift');
  else if (netCents(gift) === 0n)
    refuse('invalid_value', 'names a gift refunded in full, which has nothing to receipt');
  else if ((await giftReceipts(ctx.db, ctx.institution.id, gift.id)).issued)
    refuse(alreadyReceipted.code, alreadyReceipted.message);
  if (valid('issued_on') && (record.issued_on as string) < gift.gift_date)
    validation.errors.push(
      problem(
        'issued_on',
        'out_of_range',
        `must not be before the gift’s gift_date, ${gift.gift_date}`,
      ),
    );
  return validation.errors.length === before ? gift : null;
}

/** The receipt's money and donor, as they are at issue; the receipt keeps them from then on. */
async function receiptFields(
  ctx: CommandContext,
  gift: GiftToReceipt,
  issuedOn: string,
): Promise<ReceiptFields> {
  // Key-share locked here, as the receipt's foreign key would lock it at the insert: waiting
  // there for a concurrent edit of the donor (which locks it FOR UPDATE) would hold the
  // institution's number row meanwhile and stall every other issue; here it holds nothing yet.
  const donor = await findRow(
    ctx.db,
    donorTable,
    ctx.institution.id,
    gift.donor_id,
    ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`,
  );
  // The gift's foreign key keeps its donor, and the gift row lock keeps the gift's donor_id.
  if (!donor) throw new Error(`gift ${gift.id} has no donor ${gift.donor_id}`);
  const amount = netCents(gift);
  const benefit = toCents(gift.benefit_amount);
  const deductible = amount > benefit ? amount - benefit : 0n;
  return {
    gift_id: gift.id,
    donor_id: gift.donor_id,
    issued_on: issuedOn,
    amount: centsToNumber(amount),
    benefit_amount: centsToNumber(benefit),
    deductible_amount: centsToNumber(deductible),
    currency: gift.currency,
    donor_name: displayName(donor),
    donor_address: presentAddress(donor.address),
  };
}

/** POST /receipts: issues a receipt for a gift, numbered last of all its statements. */
export const issueReceiptCommand: Command = {
  name: `${receiptIdentity.name}.create`,
  constraints,
  async execute(ctx, request) {
    const check = judgeRecord(ctx, receiptsResource, request.body, null);
    // Dated the day of the write unless told otherwise, UTC's day, as a dry run reports it.
    check.record.issued_on ??= today();
    const gift = await receiptableGift(ctx, check);
    if (check.validation.errors.length || !gift)
      throw errors.validationFailed(check.validation.errors);
    const fields = await receiptFields(ctx, gift, check.record.issued_on as string);
    const row: ReceiptRow = ctx.dryRun
      ? {
          ...fields,
          id: 0,
          number: 0,
          status: 'issued',
          void_reason: null,
          voided_at: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        }
      : await issueReceipt(ctx.db, ctx.institution.id, fields);
    return {
      status: 201,
      body: presentReceipt(row),
      location: `${apiPath(receiptIdentity)}/${row.id}`,
    };
  },
};

/** POST /receipts/{id}/void: issued → void, once; the number stays used. */
export const voidReceiptCommand = voidCommand({
  identity: receiptIdentity,
  table: receiptTable,
  voided: 'void',
  alreadyVoided:
    'This receipt is already void. Its number stays used; issue a new receipt for the gift instead.',
  persist: (ctx, receipt, reason) => voidReceipt(ctx.db, ctx.institution.id, receipt.id, reason),
  present: presentReceipt,
});
