import { lockClause, type CommandContext } from '../../commands/command.js';
import type { RecordCheck } from '../../commands/resourceCommands.js';
import type { FieldError } from '../../errors.js';
import { centsToNumber, toCents } from '../../money.js';
import { ownCodes, type Codes } from '../campaigns/recordCoding.js';
import { proRata } from '../designations.js';
import { netCents } from '../gifts/present.js';
import type { DesignationInput, GiftRow } from '../gifts/schema.js';
import { findRow } from '../table.js';
import { balanceCents, presentPledge } from './present.js';
import { settlePledgeFrom } from './queries.js';
import { pledgeTable } from './schema.js';

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/** What a payment takes from its pledge; `codes` null when no pledge was read. */
export interface PledgePaymentJudgement {
  designations: DesignationInput[];
  currency: string | null;
  codes: Codes | null;
}

/**
 * A gift that names a pledge is a payment of it (giving.md §5): the pledge is the institution's
 * and the same donor's, open when the gift comes to name it, and the payment at most what is
 * left of its balance (counting what this gift already paid of it). The real write holds the
 * pledge FOR UPDATE from here to its commit, so payments racing for the last of a balance take
 * turns and the second sees what the first paid. A payment is in the pledge's currency
 * (fundraising.md §2; else `invalid_value` on `currency`), which is its default. Returns the
 * designations a new payment that names no fund takes from its pledge (the pledge's split, pro
 * rata in cents, each with its designation's codes), and the pledge's currency and record-level
 * codes when it was read.
 */
export async function checkPledgePayment(
  ctx: CommandContext,
  check: RecordCheck<GiftRow>,
): Promise<PledgePaymentJudgement> {
  const none = { designations: [], currency: null, codes: null };
  const { record, validation, existing, valid } = check;
  if (!valid('pledge_id')) return none;
  const pledgeId = record.pledge_id as number;
  const newlyNamed = existing?.pledge_id !== pledgeId;
  const sent = (name: string) => validation.sent.has(name);
  if (!newlyNamed && !sent('amount') && !sent('donor_id') && !sent('currency')) return none;
  const pledge = await findRow(ctx.db, pledgeTable, ctx.institution.id, pledgeId, lockClause(ctx));
  if (!pledge) {
    validation.errors.push(
      problem('pledge_id', 'reference_not_found', 'does not name an existing pledge'),
    );
    return none;
  }
  // A new payment that sends no currency takes the pledge's (judgeConversion).
  const currencyGiven = sent('currency') || existing !== null;
  if (currencyGiven && valid('currency') && record.currency !== pledge.currency)
    validation.errors.push(
      problem(
        'currency',
        'invalid_value',
        `must be the pledge’s currency, ${pledge.currency}: a payment is in the currency of what was promised`,
      ),
    );
  const currency = pledge.currency;
  const codes = { campaign_id: pledge.campaign_id, appeal_id: pledge.appeal_id };
  if (valid('donor_id') && pledge.donor_id !== record.donor_id)
    validation.errors.push(
      problem(
        'pledge_id',
        'invalid_value',
        'names a pledge of another donor: a payment is the pledge’s donor’s gift',
      ),
    );
  if (newlyNamed && pledge.status !== 'open') {
    validation.errors.push(
      problem(
        'pledge_id',
        'invalid_value',
        `names a pledge that is ${pledge.status}: it takes no payments`,
      ),
    );
    return { designations: [], currency, codes };
  }
  if (!valid('amount')) return { designations: [], currency, codes };
  const room = balanceCents(pledge) + (!newlyNamed && existing ? netCents(existing) : 0n);
  const amount = toCents(record.amount as number);
  if (amount > room)
    validation.errors.push(
      problem(
        'amount',
        'exceeds_pledge_balance',
        `must not be more than what is left of the pledge’s balance, ${centsToNumber(room)}`,
      ),
    );
  const ownSplit = existing || sent('designations') || sent('fund_id');
  if (ownSplit) return { designations: [], currency, codes };
  // Each share keeps its designation's own codes: a fund appears once in a split.
  const codesOf = new Map(pledge.designations.map((part) => [part.fund_id, ownCodes(part)]));
  const designations = proRata(pledge.designations, amount).map((share) => ({
    ...share,
    ...codesOf.get(share.fund_id),
  }));
  return { designations, currency, codes };
}

/**
 * After a real write of a gift: the pledges it paid before and pays now are settled. A pledge
 * the write fulfils (its balance now 0) gets its `pledge.fulfilled` event with the gift's.
 */
export async function settlePledgePayments(
  ctx: CommandContext,
  ...gifts: readonly (Pick<GiftRow, 'pledge_id'> | null)[]
): Promise<void> {
  const pledges = [...new Set(gifts.map((gift) => gift?.pledge_id ?? null))]
    .filter((id): id is number => id !== null)
    .sort((a, b) => a - b);
  for (const id of pledges) {
    const { before, row } = await settlePledgeFrom(ctx.db, ctx.institution.id, id);
    if (before !== 'fulfilled' && row.status === 'fulfilled')
      ctx.consequences?.push({
        objectType: 'pledge',
        happened: 'fulfilled',
        object: presentPledge(row),
      });
  }
}
