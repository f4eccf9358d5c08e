import type { Command, CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { centsToNumber, toCents } from '../../money.js';
import { text } from '../../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../../validation/validateBody.js';
import { checkReference, checkReferencesAt } from '../checks.js';
import { baseAmountOf, judgeConversion } from '../currency.js';
import {
  checkRecordCoding,
  codeGone,
  heldCodes,
  lineCodesOf,
  ownCodes,
} from '../campaigns/recordCoding.js';
import { checkDesignations, sameSplit } from '../designations.js';
import { donorReference } from '../donors/schema.js';
import { fundReference } from '../funds/schema.js';
import type { DesignationInput } from '../gifts/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { balanceCents, presentPledge } from './present.js';
import { pledgeHasPayments, settlePledge } from './queries.js';
import { pledgeResponse } from './response.js';
import { expandSchedule } from './schedule.js';
import {
  pledgeDefaults,
  pledgeIdentity,
  pledgeShape,
  pledgeTable,
  type PledgeFields,
  type PledgeRow,
  type PledgeStatus,
  type ScheduleInput,
} from './schema.js';

type PledgeCheck = RecordCheck<PledgeRow>;

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/** The schedule's own rules, across its fields and the pledge's amount and date. */
function checkSchedule({ record, validation, valid }: PledgeCheck): void {
  if (!valid('schedule')) return;
  const schedule = record.schedule as ScheduleInput;
  if (schedule.frequency === 'one_time' && schedule.installments !== 1)
    validation.errors.push(
      problem('schedule.installments', 'invalid_value', 'must be 1 for a one_time schedule'),
    );
  else if (valid('amount') && toCents(record.amount as number) < BigInt(schedule.installments))
    validation.errors.push(
      problem(
        'schedule.installments',
        'out_of_range',
        'must not be more than the amount in cents: every installment is at least 0.01',
      ),
    );
  // YYYY-MM-DD strings order as the dates do.
  if (valid('pledge_date') && schedule.first_due_on < (record.pledge_date as string))
    validation.errors.push(
      problem(
        'schedule.first_due_on',
        'out_of_range',
        `must not be before the pledge_date, ${record.pledge_date as string}`,
      ),
    );
}

const sameSchedule = (a: ScheduleInput, b: ScheduleInput) =>
  a.frequency === b.frequency &&
  a.installments === b.installments &&
  a.first_due_on === b.first_due_on;

/** The fields an update would change of what was promised, to whom, when and for which funds. */
function promiseChanges({ record, existing, valid }: PledgeCheck): string[] {
  if (!existing) return [];
  const changed: string[] = [];
  if (valid('amount') && toCents(record.amount as number) !== toCents(existing.amount))
    changed.push('amount');
  for (const name of ['donor_id', 'pledge_date', 'currency'] as const)
    if (valid(name) && record[name] !== existing[name]) changed.push(name);
  if (valid('exchange_rate') && Number(record.exchange_rate) !== Number(existing.exchange_rate))
    changed.push('exchange_rate');
  if (valid('schedule') && !sameSchedule(record.schedule as ScheduleInput, existing.schedule))
    changed.push('schedule');
  const parts = record.designations as DesignationInput[] | undefined;
  if (Array.isArray(parts) && !sameSplit(parts, existing.designations))
    changed.push('designations');
  return changed;
}

/**
 * A promise may be rewritten only while it is open and nothing was ever paid towards it: once a
 * gift names it, its payments were applied to this amount, donor, split and schedule. Only
 * `note` may change then, and on a closed pledge.
 */
async function checkPromiseFixed(ctx: CommandContext, check: PledgeCheck): Promise<void> {
  const existing = check.existing;
  const changed = promiseChanges(check);
  if (!existing || !changed.length) return;
  let why: string | null = null;
  if (existing.status !== 'open') why = `the pledge is ${existing.status}`;
  else if (await pledgeHasPayments(ctx.db, ctx.institution.id, existing.id))
    why = 'the pledge has payments';
  if (why)
    for (const name of changed)
      check.validation.errors.push(
        problem(name, 'not_allowed', `cannot change: ${why}; only note may change`),
      );
}

async function pledgeRules(ctx: CommandContext, check: PledgeCheck): Promise<void> {
  const { record, validation } = check;
  await judgeConversion(ctx, check, 'pledge_date');
  checkSchedule(check);
  const newFunds = checkDesignations(check);
  await checkRecordCoding(ctx, check, heldCodes(check.existing));
  await checkPromiseFixed(ctx, check);
  if (validation.sent.has('donor_id') && check.valid('donor_id')) {
    const found = await checkReference(ctx, donorReference, Number(record.donor_id), 'donor_id');
    if (found) validation.errors.push(found);
  }
  validation.errors.push(...(await checkReferencesAt(ctx, fundReference, newFunds)));
}

function storePledge(record: Record<string, unknown>): PledgeFields {
  const designations = record.designations as DesignationInput[];
  const schedule = record.schedule as ScheduleInput;
  const amount = record.amount as number;
  const rate = record.exchange_rate as string | number;
  return {
    donor_id: record.donor_id as number,
    amount,
    currency: record.currency as string,
    exchange_rate: rate,
    base_amount: baseAmountOf(amount, rate),
    pledge_date: record.pledge_date as string,
    designations: designations.map((part) => ({
      fund_id: part.fund_id,
      amount: Number(part.amount),
      ...ownCodes(part),
    })),
    schedule: {
      frequency: schedule.frequency,
      installments: schedule.installments,
      first_due_on: schedule.first_due_on,
    },
    installments: expandSchedule(
      amount,
      schedule.frequency,
      schedule.installments,
      schedule.first_due_on,
    ),
    note: (record.note ?? null) as string | null,
    fund_ids: designations.map((part) => part.fund_id),
    campaign_id: (record.campaign_id ?? null) as number | null,
    appeal_id: (record.appeal_id ?? null) as number | null,
    ...lineCodesOf(record),
  };
}

/** A dry-run preview of a new pledge: nothing paid yet. */
const fresh = {
  status: 'open',
  amount_paid: 0,
  amount_written_off: 0,
  base_amount_paid: 0,
  close_reason: null,
  closed_at: null,
} as const;

export const pledgesResource: WritableResource<PledgeRow, PledgeFields> = {
  identity: pledgeIdentity,
  table: pledgeTable,
  shape: pledgeShape,
  defaults: pledgeDefaults,
  contextDefaults: (ctx) => ({ currency: ctx.institution.currency }),
  readOnly: readOnlyOf(pledgeResponse, pledgeShape),
  constraints: {
    // codingOf holds each code FOR KEY SHARE, so these only back it up.
    pledges_campaign_fkey: codeGone('campaign_id', 'campaign'),
    pledges_appeal_fkey: codeGone('appeal_id', 'appeal'),
    pledges_donor_fkey: problem(
      'donor_id',
      'reference_not_found',
      'does not name an existing donor',
    ),
  },
  rules: pledgeRules,
  store: storePledge,
  // What follows from payments (and a new schedule) is settlePledge's to work out.
  afterWrite: (ctx, row) => settlePledge(ctx.db, ctx.institution.id, row.id),
  present: (row) => presentPledge({ ...fresh, ...row }),
};

export const createPledge = createCommand(pledgesResource);
export const updatePledgeCommand = updateCommand(pledgesResource);

/** A write-off or a cancellation says why. */
export const closeShape: Shape = { reason: { schema: text(500), required: true } };

/**
 * POST /pledges/{id}/write-off and /cancel: the two ways a promise ends other than being paid.
 * Both need an open pledge; a cancellation also needs nothing paid (else it is a write-off).
 * The pledge is locked for the real write, so a payment either comes before (and is seen here)
 * or after (and finds the pledge closed).
 */
function closeCommand(
  action: 'write-off' | 'cancel',
  status: Extract<PledgeStatus, 'written_off' | 'cancelled'>,
): Command {
  return {
    name: `${pledgeIdentity.name}.${action}`,
    async execute(ctx, request) {
      const pledge = await findTarget(ctx, request, pledgesResource);
      if (pledge.status !== 'open')
        throw errors.invalidStateTransition(
          'status',
          `This pledge is ${pledge.status}; only an open pledge can be ${status.replace('_', ' ')}.`,
        );
      if (status === 'cancelled' && toCents(pledge.amount_paid) > 0n)
        throw errors.invalidStateTransition(
          'status',
          'Part of this pledge is paid, so it cannot be cancelled; write off the balance instead (POST /api/v1/pledges/{id}/write-off).',
        );
      const validation = validateBody(closeShape, request.body as JsonObject);
      requireFields(validation.values, ['reason'], validation);
      if (validation.errors.length) throw errors.validationFailed(validation.errors);
      const reason = validation.values.reason as string;
      const row: PledgeRow = ctx.dryRun
        ? {
            ...pledge,
            status,
            amount_written_off: status === 'written_off' ? centsToNumber(balanceCents(pledge)) : 0,
            close_reason: reason,
            closed_at: ctx.now,
            updated_at: ctx.now,
          }
        : await settlePledge(ctx.db, ctx.institution.id, pledge.id, { status, reason });
      return { status: 200, body: presentPledge(row) };
    },
  };
}

export const writeOffPledgeCommand = closeCommand('write-off', 'written_off');
export const cancelPledgeCommand = closeCommand('cancel', 'cancelled');
