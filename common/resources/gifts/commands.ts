import { sql, type FragmentSqlToken } from 'slonik';
import {
  deleted,
  type Command,
  type CommandContext,
  type JudgedCreate,
  type SingleStatementCreate,
  type WriteRequest,
} from '../../commands/command.js';
import {
  apiPath,
  createCommand,
  findTarget,
  judgeRecord,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import { toCents } from '../../money.js';
import { hintedAppealCampaign } from '../campaigns/hints.js';
import { newLinesSteps, writeGiftLines } from '../campaigns/lines.js';
import {
  codedLinesHold,
  monthRowsHeld,
  type CodedLinesHints,
} from '../campaigns/linesInStatement.js';
import {
  checkRecordCoding,
  codeGone,
  heldCodes,
  lineCodesOf,
  ownCodes,
  settleLineCodes,
  type Codes,
} from '../campaigns/recordCoding.js';
import { checkReference, checkReferencesAt } from '../checks.js';
import { hintedRate } from '../exchangeRates/hints.js';
import { rateInEffect } from '../exchangeRates/queries.js';
import { apportionBase, baseAmountOf, judgeConversion } from '../currency.js';
import { checkDesignations, sameSplit } from '../designations.js';
import { checkPledgePayment, settlePledgePayments } from '../pledges/payments.js';
import { donorReference } from '../donors/schema.js';
import { holdDonors } from '../donors/queries.js';
import { fundReference } from '../funds/schema.js';
import { checkPayment } from '../recurringGifts/payments.js';
import { recurringGiftCodes } from '../recurringGifts/queries.js';
import { readOnlyOf } from '../responseFields.js';
import { findRow, insertFragment, type Stored, type Table } from '../table.js';
import { presentGift } from './present.js';
import { deleteGift, giftReceipts } from './queries.js';
import { giftResponse } from './response.js';
import {
  giftDefaults,
  giftIdentity,
  giftShape,
  giftTable,
  MAX_SPLITS,
  type DesignationInput,
  type GiftFields,
  type GiftRow,
  type SoftCreditInput,
} from './schema.js';
import {
  checkTribute,
  storeTribute,
  tributeRulesWithoutLookup,
  type TributeInput,
} from './tribute.js';

type GiftCheck = RecordCheck<GiftRow>;

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/** The rules that need no lookup: check_number only on checks; a benefit within the amount. */
function rulesWithoutLookup({ record, validation, valid }: GiftCheck): void {
  if (record.check_number !== null && record.type !== 'check' && !validation.invalid.has('type')) {
    validation.errors.push(
      problem('check_number', 'not_allowed', 'is allowed only when type is check'),
    );
  }
  if (
    valid('benefit_amount') &&
    valid('amount') &&
    toCents(record.benefit_amount as number) > toCents(record.amount as number)
  ) {
    validation.errors.push(
      problem('benefit_amount', 'out_of_range', 'must not be more than the gift’s amount'),
    );
  }
}

/**
 * Soft credits: other donors, each once, each at most the gift's amount. Returns the donors to
 * look up: those new to the gift, which must be donors of the institution.
 */
function checkSoftCredits(check: GiftCheck): { id: number; param: string }[] {
  const { record, validation, existing, valid } = check;
  if (validation.invalid.has('soft_credits')) return [];
  const credits = record.soft_credits as SoftCreditInput[];
  const seen = new Set<number>();
  credits.forEach((credit, index) => {
    const at = `soft_credits.${index}`;
    if (valid('donor_id') && credit.donor_id === record.donor_id)
      validation.errors.push(
        problem(
          `${at}.donor_id`,
          'not_allowed',
          'names the gift’s own donor, who has the hard credit',
        ),
      );
    else if (seen.has(credit.donor_id))
      validation.errors.push(
        problem(`${at}.donor_id`, 'already_in_use', 'names a donor that another soft credit names'),
      );
    seen.add(credit.donor_id);
    if (valid('amount') && toCents(credit.amount) > toCents(record.amount as number))
      validation.errors.push(
        problem(`${at}.amount`, 'out_of_range', 'must not be more than the gift’s amount'),
      );
  });
  if (!validation.sent.has('soft_credits')) return [];
  const held = new Set((existing?.soft_credits ?? []).map((credit) => credit.donor_id));
  return credits
    .map((credit, index) => ({ id: credit.donor_id, param: `soft_credits.${index}.donor_id` }))
    .filter((entry) => !held.has(entry.id));
}

/** A match names a gift of the institution, by another donor, not voided, not itself. */
async function checkMatch(ctx: CommandContext, check: GiftCheck): Promise<void> {
  const { record, validation, existing, valid } = check;
  if (!valid('matches_gift_id')) return;
  if (!validation.sent.has('matches_gift_id') && !validation.sent.has('donor_id')) return;
  const param = 'matches_gift_id';
  const id = record.matches_gift_id as number;
  if (existing && id === existing.id) {
    validation.errors.push(problem(param, 'invalid_value', 'names this gift itself'));
    return;
  }
  const matched = await findRow(
    ctx.db,
    giftTable,
    ctx.institution.id,
    id,
    ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`,
  );
  if (!matched) {
    validation.errors.push(problem(param, 'reference_not_found', 'does not name an existing gift'));
  } else if (
    matched.matched_by_gift_ids.filter((other) => other !== existing?.id).length >= MAX_SPLITS
  ) {
    validation.errors.push(
      problem(param, 'invalid_value', `names a gift that ${MAX_SPLITS} gifts match already`),
    );
  } else if (matched.status === 'voided') {
    validation.errors.push(problem(param, 'invalid_value', 'names a voided gift'));
  } else if (valid('donor_id') && matched.donor_id === record.donor_id) {
    validation.errors.push(
      problem(
        param,
        'invalid_value',
        'names a gift of the same donor; a match comes from another donor',
      ),
    );
  }
}

/** The fields a receipted, refunded or voided gift keeps as they are (giving.md §4). */
function moneyChanges(check: GiftCheck): string[] {
  const { record, existing, valid } = check;
  if (!existing) return [];
  const changed: string[] = [];
  const cents = (value: unknown) => toCents(value as number | string);
  if (valid('amount') && cents(record.amount) !== cents(existing.amount)) changed.push('amount');
  if (valid('benefit_amount') && cents(record.benefit_amount) !== cents(existing.benefit_amount))
    changed.push('benefit_amount');
  for (const name of ['donor_id', 'gift_date', 'currency'] as const)
    if (valid(name) && record[name] !== existing[name]) changed.push(name);
  // The rate is money too (it makes the base amount every total sums).
  if (valid('exchange_rate') && !sameRate(record.exchange_rate, existing.exchange_rate))
    changed.push('exchange_rate');
  // Which pledge a gift pays is money too: moving it changes two pledges' balances.
  if (check.validation.sent.has('pledge_id') && !check.validation.invalid.has('pledge_id'))
    if ((record.pledge_id ?? null) !== existing.pledge_id) changed.push('pledge_id');
  const parts = record.designations as DesignationInput[] | undefined;
  if (Array.isArray(parts) && !sameSplit(parts, existing.designations))
    changed.push('designations');
  return changed;
}

const sameRate = (a: unknown, b: unknown) =>
  a !== null && b !== null && a !== undefined && Number(a) === Number(b);

/** 409 gift_locked when the update changes money of a gift whose money history is fixed. */
async function checkLock(ctx: CommandContext, check: GiftCheck): Promise<void> {
  const existing = check.existing;
  const changed = moneyChanges(check);
  if (!existing || !changed.length) return;
  const fields = changed.join(', ');
  if (existing.status === 'voided')
    throw errors.giftLocked(`This gift is voided, so its ${fields} cannot change.`);
  // A gift recorded before currencies: its refunds have no base amounts, and a refund is never
  // changed, so a rate set now would leave what was given back out of its base figures.
  if (toCents(existing.amount_refunded) > 0n && existing.exchange_rate === null)
    throw errors.giftLocked(
      `This gift was recorded before currencies and has refunds, so its ${fields} cannot change. Void it (POST /api/v1/gifts/{id}/void) and record it again with its exchange_rate, then record its refunds on the new gift.`,
    );
  if (toCents(existing.amount_refunded) > 0n)
    throw errors.giftLocked(
      `This gift has refunds, so its ${fields} cannot change. Void it and record it again, or refund more.`,
    );
  if ((await giftReceipts(ctx.db, ctx.institution.id, existing.id)).issued)
    throw errors.giftLocked(
      `This gift has an issued receipt, so its ${fields} cannot change. Void the receipt first (POST /api/v1/receipts/{id}/void).`,
    );
}

/**
 * A new payment that sends neither code takes its pledge's or its recurring gift's record-level
 * codes (fundraising.md §3: their codes are the defaults of their payments). Answers the codes
 * it took, which the payment keeps even if they closed since, as the pledge does.
 */
async function inheritCodes(
  ctx: CommandContext,
  check: GiftCheck,
  pledgeCodes: Codes | null,
): Promise<Codes | null> {
  const { record, validation, existing } = check;
  if (existing || validation.sent.has('campaign_id') || validation.sent.has('appeal_id'))
    return null;
  let codes = pledgeCodes;
  if (!codes && check.valid('recurring_gift_id') && record.recurring_gift_id !== null)
    codes = await recurringGiftCodes(ctx.db, ctx.institution.id, Number(record.recurring_gift_id));
  if (codes) {
    record.campaign_id = codes.campaign_id;
    record.appeal_id = codes.appeal_id;
  }
  return codes;
}

/** The donors a gift names: its own, its soft credits' and its honoree. */
function namedDonors(record: Record<string, unknown>): number[] {
  const credits = Array.isArray(record.soft_credits)
    ? (record.soft_credits as { donor_id?: unknown }[]).map((credit) => credit?.donor_id)
    : [];
  const honoree = (record.tribute as { honoree_donor_id?: unknown } | null)?.honoree_donor_id;
  return [record.donor_id, ...credits, honoree].filter(
    (id): id is number => typeof id === 'number' && Number.isSafeInteger(id) && id > 0,
  );
}

async function giftRules(ctx: CommandContext, check: GiftCheck): Promise<void> {
  rulesWithoutLookup(check);
  const { record, validation } = check;
  // Donors first, in the one order (holdDonors), before the pledge and anything else.
  await holdDonors(ctx, namedDonors(record));
  const payment = await checkPledgePayment(ctx, check);
  await judgeConversion(ctx, check, 'gift_date', payment.currency);
  const inherited = payment.designations;
  const newFunds = checkDesignations(check, inherited);
  const defaults = await inheritCodes(ctx, check, payment.codes);
  await checkRecordCoding(ctx, check, heldCodes(check.existing, [defaults, ...inherited]));
  await checkLock(ctx, check);
  if (validation.sent.has('donor_id') && check.valid('donor_id')) {
    const found = await checkReference(ctx, donorReference, Number(record.donor_id), 'donor_id');
    if (found) validation.errors.push(found);
  }
  validation.errors.push(...(await checkReferencesAt(ctx, fundReference, newFunds)));
  const newDonors = checkSoftCredits(check);
  validation.errors.push(...(await checkReferencesAt(ctx, donorReference, newDonors)));
  await checkMatch(ctx, check);
  await checkPayment(ctx, check);
  await checkTribute(ctx, check);
}

/** The stored fields: `fund_id` lives on as the gift's one designation. */
function storeGift(record: Record<string, unknown>, existing: GiftRow | null): GiftFields {
  const refunded = new Map(
    (existing?.designations ?? []).map((part) => [part.fund_id, part.amount_refunded]),
  );
  const baseRefunded = new Map(
    (existing?.designations ?? []).map((part) => [part.fund_id, part.base_amount_refunded ?? 0]),
  );
  const designations = record.designations as DesignationInput[];
  const softCredits = record.soft_credits as SoftCreditInput[];
  const rate = record.exchange_rate as string | number | null;
  const baseAmount = rate === null ? null : baseAmountOf(record.amount as number, rate);
  const baseParts = baseAmount === null ? [] : apportionBase(designations, baseAmount);
  return {
    donor_id: record.donor_id as number,
    recurring_gift_id: record.recurring_gift_id as number | null,
    amount: record.amount as number,
    currency: record.currency as string,
    exchange_rate: rate,
    base_amount: baseAmount,
    subject: record.subject as string,
    gift_date: record.gift_date as string,
    type: record.type as GiftFields['type'],
    check_number: record.check_number as string | null,
    designations: designations.map((part, index) => ({
      fund_id: part.fund_id,
      amount: Number(part.amount),
      ...ownCodes(part),
      amount_refunded: refunded.get(part.fund_id) ?? 0,
      ...(baseAmount === null
        ? {}
        : {
            base_amount: baseParts[index]!,
            base_amount_refunded: baseRefunded.get(part.fund_id) ?? 0,
          }),
    })),
    soft_credits: softCredits.map((credit) => ({
      donor_id: credit.donor_id,
      amount: Number(credit.amount),
      reason: credit.reason,
      // A credit of the whole gift is the whole base amount, not its amount at the rate again.
      ...(baseAmount === null || rate === null
        ? {}
        : { base_amount: Math.min(baseAmountOf(credit.amount, rate), baseAmount) }),
    })),
    matches_gift_id: record.matches_gift_id as number | null,
    benefit_amount: record.benefit_amount as number,
    pledge_id: (record.pledge_id ?? null) as number | null,
    campaign_id: (record.campaign_id ?? null) as number | null,
    appeal_id: (record.appeal_id ?? null) as number | null,
    ...lineCodesOf(record),
    fund_ids: designations.map((part) => part.fund_id),
    soft_credit_donor_ids: softCredits.map((credit) => credit.donor_id),
    ...storeTribute(record.tribute as TributeInput | null, existing),
  };
}

/** Whether a body names a campaign or an appeal for one of the gift's designations. */
function codesDesignations(record: Record<string, unknown>): boolean {
  const parts = Array.isArray(record.designations)
    ? (record.designations as DesignationInput[])
    : [];
  return parts.some((part) => part.campaign_id != null || part.appeal_id != null);
}

/**
 * The codes of a new gift coded at the gift, as its one statement's guard is to confirm them
 * (codedLinesHold): the campaign its lines count toward is its own, else its appeal's as hinted
 * (hints.ts); null when the gift names no code. Undefined when they need codingOf's reads: an
 * appeal whose campaign no hint tells, or codes on a designation.
 */
function codesInOneStatement(record: Record<string, unknown>, institutionId: number) {
  if (codesDesignations(record)) return undefined;
  const campaign = (record.campaign_id ?? null) as number | null;
  const appeal = (record.appeal_id ?? null) as number | null;
  if (campaign === null && appeal === null) return null;
  const taken = campaign === null ? hintedAppealCampaign(institutionId, appeal!) : campaign;
  if (taken === undefined) return undefined;
  settleLineCodes(record, {
    campaign_ids: taken === null ? [] : [taken],
    appeal_ids: appeal === null ? [] : [appeal],
  });
  return {
    campaign_id: taken,
    appeal_id: appeal,
    own: campaign !== null,
  } satisfies CodedLinesHints;
}

/** A dry-run preview and a fresh insert have no money history yet. */
const noHistory = {
  status: 'posted',
  amount_refunded: 0,
  base_amount_refunded: 0,
  void_reason: null,
  voided_at: null,
  matched_by_gift_ids: [],
} as const;

export const giftsResource: WritableResource<GiftRow, GiftFields> = {
  identity: giftIdentity,
  table: giftTable,
  shape: giftShape,
  defaults: giftDefaults,
  contextDefaults: (ctx) => ({ currency: ctx.institution.currency }),
  readOnly: readOnlyOf(giftResponse, giftShape),
  /** A donor deleted by a concurrent write after the checks above passed. */
  constraints: {
    gifts_donor_fkey: problem('donor_id', 'reference_not_found', 'does not name an existing donor'),
    gifts_matches_gift_fkey: problem(
      'matches_gift_id',
      'reference_not_found',
      'does not name an existing gift',
    ),
    gifts_pledge_fkey: problem(
      'pledge_id',
      'reference_not_found',
      'does not name an existing pledge',
    ),
    gifts_tribute_honoree_fkey: problem(
      'tribute.honoree_donor_id',
      'reference_not_found',
      'does not name an existing donor',
    ),
    // codingOf holds each code FOR KEY SHARE, so these only back it up.
    gifts_campaign_fkey: codeGone('campaign_id', 'campaign'),
    gifts_appeal_fkey: codeGone('appeal_id', 'appeal'),
    // The payment rules, under the pledge's lock, check it first: this is the table's backstop.
    pledges_amounts_check: problem(
      'amount',
      'exceeds_pledge_balance',
      'must not be more than what is left of the pledge’s balance',
    ),
  },
  rules: giftRules,
  store: storeGift,
  async afterWrite(ctx, row, existing) {
    await settlePledgePayments(ctx, existing, row);
    await writeGiftLines(ctx.db, ctx.institution.id, row, existing);
    return row;
  },
  present: (row) => presentGift({ ...noHistory, ...row }),
};

/**
 * What checkReferencesAt would find of these records, as a condition of one statement: every
 * one is the institution's (and open, for funds), each held FOR KEY SHARE until the commit, as
 * the full path holds them, so that a donor being deleted waits for the gift or is not found.
 */
function referencesHold(
  institutionId: number,
  reference: { table: string; unusable?: { statuses: readonly string[] } },
  ids: readonly number[],
): FragmentSqlToken {
  if (!ids.length) return sql.fragment`true`;
  const usable = reference.unusable
    ? sql.fragment`AND status <> ALL(${sql.array([...reference.unusable.statuses], 'text')})`
    : sql.fragment``;
  return sql.fragment`(SELECT count(*) FROM (
      SELECT id FROM ${sql.identifier([reference.table])}
      WHERE institution_id = ${institutionId} AND id = ANY(${sql.array([...ids], 'int8')}) ${usable}
      ORDER BY id FOR KEY SHARE) AS held) = ${ids.length}`;
}

/**
 * The institution's base currency is still the one the write was judged with, held as
 * baseCurrency holds it: a change of currency waits for the gift, or the gift for it, and then
 * the lock reads the row as the change left it, this guard fails, and the gift is judged in full.
 */
const baseCurrencyHolds = (institutionId: number, currency: string): FragmentSqlToken =>
  sql.fragment`EXISTS (SELECT 1 FROM institutions
    WHERE id = ${institutionId} AND currency = ${currency} FOR KEY SHARE)`;

/** A rate taken from a hint is still the one in effect on its date (see hints.ts). */
const rateHolds = (
  institutionId: number,
  hinted: { currency: string; on: string; rate: string },
): FragmentSqlToken =>
  sql.fragment`${rateInEffect(institutionId, hinted.currency, sql.fragment`${hinted.on}::date`)}
    = ${hinted.rate}::numeric`;

/**
 * A new gift whose body passes every rule that needs no lookup, and names no matched gift,
 * commits in one statement: the guard enforces what checkReference would of its donor (a donor
 * of the institution, not merged, held FOR KEY SHARE: a merge holding it FOR UPDATE goes first,
 * and the guard then reads it merged) and what the lookups of its funds and soft-credited
 * donors would. Anything else (null), or a guard that does not hold, goes
 * through the full validation, which says what is wrong.
 */
function giftInOneStatement(
  ctx: Pick<CommandContext, 'institution'>,
  request: WriteRequest,
): SingleStatementCreate | null {
  const check = judgeRecord(ctx, giftsResource, request.body, null);
  rulesWithoutLookup(check);
  const funds = checkDesignations(check).map((entry) => entry.id);
  const donors = checkSoftCredits(check).map((entry) => entry.id);
  const honoree = tributeRulesWithoutLookup(check);
  const honorees = honoree === null ? [] : [honoree];
  if (check.validation.errors.length || check.record.matches_gift_id !== null) return null;
  // A payment's recurring gift needs a lookup (its donor and status) that no guard here makes.
  if (check.record.recurring_gift_id !== null) return null;
  // A payment reads and locks its pledge first (its balance, its split), which no guard can do.
  if (check.record.pledge_id !== null) return null;
  // Codes the guard confirms, and the statement writes the gift's lines (codedLinesSteps).
  const codes = codesInOneStatement(check.record, ctx.institution.id);
  if (codes === undefined) return null;
  // The guard below confirms the base currency, and a rate taken from a hint.
  const base = ctx.institution.currency;
  const institutionId = ctx.institution.id;
  const sentRate = check.validation.sent.has('exchange_rate');
  let hinted: { currency: string; on: string; rate: string } | undefined;
  if (check.record.currency === base) {
    if (sentRate) return null;
    check.record.exchange_rate = 1;
  } else if (!sentRate) {
    const [currency, on] = [check.record.currency as string, check.record.gift_date as string];
    const rate = hintedRate(institutionId, currency, on);
    // No rate found here yet: the full path looks it up (and hints it).
    if (rate === undefined) return null;
    hinted = { currency, on, rate };
    check.record.exchange_rate = rate;
  }
  const fields = storeGift(check.record, null);
  const judged: JudgedCreate = {
    table: giftTable as unknown as Table<Stored, object>,
    fields,
    references: [
      { reference: donorReference, ids: [Number(check.record.donor_id)] },
      { reference: fundReference, ids: funds },
      { reference: donorReference, ids: donors },
      { reference: donorReference, ids: honorees },
    ],
    baseCurrency: base,
    ...(hinted ? { rate: hinted } : {}),
  };
  const codesHold = codes
    ? sql.fragment`${monthRowsHeld(institutionId, sql.fragment`SELECT ${sql.jsonb({ donor_id: Number(check.record.donor_id), gift_date: String(check.record.gift_date) })} AS fields`)}
        AND ${codedLinesHold(institutionId, sql.fragment`${sql.jsonb(codes)}`)}`
    : sql.fragment`true`;
  return {
    // Built only when used: an import's chunk inserts many rows without it.
    insert: (guard) =>
      insertFragment(
        giftTable,
        institutionId,
        fields,
        sql.fragment`${guard} AND ${referencesHold(institutionId, fundReference, funds)}
          AND ${referencesHold(institutionId, donorReference, [
            ...new Set([Number(check.record.donor_id), ...donors, ...honorees]),
          ])}
          AND ${baseCurrencyHolds(institutionId, base)}
          AND ${hinted ? rateHolds(institutionId, hinted) : sql.fragment`true`}
          AND ${codesHold}`,
      ),
    // A coded gift's row alone would leave its lines unwritten: it goes only with its steps.
    ...(codes
      ? {
          followed: {
            judged,
            followUp: {
              kind: 'gift_lines',
              hints: codes,
              guard: (hints) => codedLinesHold(institutionId, hints),
              first: (requested) => monthRowsHeld(institutionId, requested),
              steps: (created) => newLinesSteps(institutionId, created),
            },
          },
        }
      : { judged }),
    fields: { ...noHistory, ...fields },
    present: (row) => presentGift(row as GiftRow),
    path: apiPath(giftIdentity),
  };
}

export const createGift = createCommand(giftsResource, { singleStatement: giftInOneStatement });
export const updateGiftCommand = updateCommand(giftsResource);

export const deleteGiftCommand: Command = {
  name: `${giftIdentity.name}.delete`,
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, giftsResource);
    const receipts = await giftReceipts(ctx.db, ctx.institution.id, existing.id);
    if (existing.status === 'voided' || toCents(existing.amount_refunded) > 0n || receipts.ever)
      throw errors.giftLocked(
        'This gift has a money history (a receipt, a refund or a void), so it cannot be deleted. ' +
          'Void it instead (POST /api/v1/gifts/{id}/void).',
      );
    if (existing.matched_by_gift_ids.length)
      throw errors.resourceInUse(
        `Gifts ${existing.matched_by_gift_ids.join(', ')} match this gift; change their matches_gift_id first.`,
      );
    if (!ctx.dryRun) {
      // Its lines go by the foreign key; what they counted goes from the campaign totals first.
      await writeGiftLines(ctx.db, ctx.institution.id, existing, existing, true);
      await deleteGift(ctx.db, ctx.institution.id, existing.id);
      await settlePledgePayments(ctx, existing);
    }
    return deleted(giftIdentity.object, existing.id);
  },
};
