import { today } from '../../clock.js';
import type { CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { checkReference, checkReferencesAt } from '../checks.js';
import { baseAmountOf, judgeConversion } from '../currency.js';
import {
  checkRecordCoding,
  codeGone,
  heldCodes,
  lineCodesOf,
  ownCodes,
} from '../campaigns/recordCoding.js';
import { checkDesignations } from '../designations.js';
import type { DesignationInput } from '../gifts/schema.js';
import { findDonorStatus } from '../donors/queries.js';
import { donorReference } from '../donors/schema.js';
import { fundReference } from '../funds/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { presentRecurringGift } from './present.js';
import { recurringGiftResponse } from './response.js';
import {
  previewFigures,
  recurringGiftDefaults,
  recurringGiftIdentity,
  recurringGiftInitialStatuses,
  recurringGiftShape,
  recurringGiftTable,
  recurringGiftTransitions,
  type RecurringGiftFields,
  type RecurringGiftRow,
  type RecurringGiftStatus,
} from './schema.js';

type RecurringGiftCheck = RecordCheck<RecurringGiftRow>;

/** A status change the machine does not allow is a 409 before any field is judged. */
function checkStatus({ record, validation, existing, valid }: RecurringGiftCheck): void {
  if (!valid('status')) return;
  const status = record.status as RecurringGiftStatus;
  if (existing) {
    if (status !== existing.status && !recurringGiftTransitions[existing.status].includes(status))
      throw errors.invalidStateTransition(
        'status',
        `A recurring gift cannot go from ${existing.status} to ${status}.`,
      );
  } else if (!recurringGiftInitialStatuses.includes(status)) {
    validation.errors.push({
      param: 'status',
      code: 'invalid_value',
      message: 'a new recurring gift starts as active or paused',
    });
  }
}

async function recurringGiftRules(ctx: CommandContext, check: RecurringGiftCheck): Promise<void> {
  checkStatus(check);
  await judgeConversion(ctx, check, 'start_on');
  const { record, validation, existing, valid } = check;
  // The payments are the donor's gifts: another donor's giving is another recurring gift.
  if (existing && valid('donor_id') && record.donor_id !== existing.donor_id) {
    validation.errors.push({
      param: 'donor_id',
      code: 'not_allowed',
      message: 'cannot change: the payments are this donor’s gifts; cancel and start a new one',
    });
  } else if (!existing && valid('donor_id')) {
    const donorId = record.donor_id as number;
    const found = await checkReference(ctx, donorReference, donorId, 'donor_id');
    if (found) validation.errors.push(found);
    // A deceased donor gives no more (constituents.md §3). After checkReference's lock, so a
    // create racing the PATCH that makes the donor deceased sees it and is refused.
    else if ((await findDonorStatus(ctx.db, ctx.institution.id, donorId)) === 'deceased')
      validation.errors.push({
        param: 'donor_id',
        code: 'reference_inactive',
        message: 'names a donor that is deceased',
      });
  }
  const newFunds = checkDesignations(check);
  validation.errors.push(...(await checkReferencesAt(ctx, fundReference, newFunds)));
  await checkRecordCoding(ctx, check, heldCodes(existing));
}

/**
 * A cancelled recurring gift is final: it takes no change at all, not even an empty one (409
 * `invalid_state_transition`, as a second void of a gift is).
 */
async function refuseCancelled(_ctx: CommandContext, existing: RecurringGiftRow): Promise<void> {
  if (existing.status === 'cancelled')
    throw errors.invalidStateTransition(
      'status',
      'This recurring gift is cancelled, which is final: it takes no change. Record a new one instead.',
    );
}

function storeRecurringGift(
  record: Record<string, unknown>,
  existing: RecurringGiftRow | null,
): RecurringGiftFields {
  const status = record.status as RecurringGiftStatus;
  const resumed = existing?.status === 'paused' && status === 'active';
  const rate = record.exchange_rate as string | number | null;
  return {
    donor_id: record.donor_id as number,
    amount: record.amount as number,
    currency: record.currency as string,
    exchange_rate: rate,
    base_amount: rate === null ? null : baseAmountOf(record.amount as number, rate),
    frequency: record.frequency as RecurringGiftFields['frequency'],
    start_on: record.start_on as string,
    designations: (record.designations as DesignationInput[]).map((part) => ({
      fund_id: part.fund_id,
      amount: Number(part.amount),
      ...ownCodes(part),
    })),
    status,
    resumed_on: resumed ? today() : (existing?.resumed_on ?? null),
    campaign_id: (record.campaign_id ?? null) as number | null,
    appeal_id: (record.appeal_id ?? null) as number | null,
    ...lineCodesOf(record),
  };
}

const recurringGiftsResource: WritableResource<RecurringGiftRow, RecurringGiftFields> = {
  identity: recurringGiftIdentity,
  table: recurringGiftTable,
  shape: recurringGiftShape,
  defaults: recurringGiftDefaults,
  contextDefaults: (ctx) => ({ currency: ctx.institution.currency }),
  readOnly: readOnlyOf(recurringGiftResponse, recurringGiftShape),
  constraints: {
    // codingOf holds each code FOR KEY SHARE, so these only back it up.
    recurring_gifts_campaign_fkey: codeGone('campaign_id', 'campaign'),
    recurring_gifts_appeal_fkey: codeGone('appeal_id', 'appeal'),
    recurring_gifts_donor_fkey: {
      param: 'donor_id',
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    },
  },
  rules: recurringGiftRules,
  store: storeRecurringGift,
  guard: refuseCancelled,
  async derive(ctx, row) {
    const { figures } = await ctx.db.one(previewFigures(ctx.institution.id, row));
    return { ...row, figures };
  },
  present: presentRecurringGift,
};

export const createRecurringGift = createCommand(recurringGiftsResource);
export const updateRecurringGiftCommand = updateCommand(recurringGiftsResource);
