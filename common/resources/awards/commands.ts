import { sql } from 'slonik';
import type { CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import { awardCycleReference } from '../awardCycles/schema.js';
import { checkReference } from '../checks.js';
import { toCents } from '../../money.js';
import { checkFundCapacity } from '../funds/capacity.js';
import { readOnlyOf } from '../responseFields.js';
import { scholarshipReference } from '../scholarships/schema.js';
import { studentReference } from '../students/schema.js';
import { presentAward } from './present.js';
import { awardCycleStatus, hasLiveAward, scholarshipFundId } from './queries.js';
import { awardResponse } from './response.js';
import {
  awardDefaults,
  awardIdentity,
  awardShape,
  awardTable,
  awardTransitions,
  isLive,
  type AwardFields,
  type AwardRow,
  type AwardStatus,
} from './schema.js';
const references = [
  ['award_cycle_id', awardCycleReference],
  ['scholarship_id', scholarshipReference],
  ['student_id', studentReference],
] as const;

/** Referenced rows are held until the real write commits; a read-only dry run cannot lock. */
const shareLock = (ctx: CommandContext) => (ctx.dryRun ? sql.fragment`` : sql.fragment`FOR SHARE`);

const liveAwardTaken: FieldError = {
  param: 'student_id',
  code: 'already_in_use',
  message: 'already has a live award of this scholarship in this award cycle',
};

/**
 * The fund limit (product.md §4, Award): a change that raises what the award draws on a fund
 * (a create, a larger amount, or a move to a scholarship on another fund) must fit in that
 * fund's award limit. A change that draws the same or less is never refused for capacity. The
 * scholarship row is held FOR SHARE so it cannot move to another fund meanwhile, and
 * checkFundCapacity locks the fund FOR UPDATE before it sums.
 */
async function checkAwardCapacity(
  ctx: CommandContext,
  award: { scholarship_id: number; amount: number | string },
  existing: AwardRow | null,
): Promise<FieldError | null> {
  const institutionId = ctx.institution.id;
  const fundId = await scholarshipFundId(
    ctx.db,
    institutionId,
    award.scholarship_id,
    shareLock(ctx),
  );
  if (fundId === null) return null;
  if (existing && isLive(existing.status)) {
    const previousFundId =
      existing.scholarship_id === award.scholarship_id
        ? fundId
        : await scholarshipFundId(ctx.db, institutionId, existing.scholarship_id);
    if (previousFundId === fundId && toCents(award.amount) <= toCents(existing.amount)) return null;
  }
  return checkFundCapacity(ctx, fundId, award.amount, existing?.id ?? null, 'amount');
}

/**
 * Every rule for an award, on the merged record of a create or an update. A status change the
 * state machine does not allow is a 409 before any field is judged: no fix to the other fields
 * could make it succeed. References are checked where they are set or changed, so an award whose
 * scholarship was retired later (or whose cycle was closed) can still move through its states.
 */
async function awardRules(ctx: CommandContext, check: RecordCheck<AwardRow>): Promise<void> {
  const { record, validation, existing, valid } = check;

  if (valid('status')) {
    const status = record.status as AwardStatus;
    if (
      existing &&
      status !== existing.status &&
      !awardTransitions[existing.status].includes(status)
    ) {
      throw errors.invalidStateTransition(
        'status',
        `An award cannot go from ${existing.status} to ${status}.`,
      );
    }
    if (!existing && status !== awardDefaults.status) {
      validation.invalid.add('status');
      validation.errors.push({
        param: 'status',
        code: 'invalid_value',
        message: 'a new award starts as offered',
      });
    }
  }

  const changed = (name: (typeof references)[number][0]) =>
    valid(name) && record[name] !== existing?.[name];
  for (const [name, reference] of references) {
    if (!changed(name)) continue;
    const problem = await checkReference(ctx, reference, Number(record[name]), name);
    if (problem) {
      validation.invalid.add(name);
      validation.errors.push(problem);
    }
  }

  // Where the status itself is wrong, judge the rest as if it stayed as it is (offered on a
  // create), so that every other problem is still reported.
  const status = valid('status') ? record.status : (existing?.status ?? awardDefaults.status);
  if (isLive(status)) {
    const identified = references.every(([name]) => valid(name));
    if (identified && (!existing || references.some(([name]) => changed(name)))) {
      const taken = await hasLiveAward(
        ctx.db,
        ctx.institution.id,
        record as Pick<AwardFields, 'award_cycle_id' | 'scholarship_id' | 'student_id'>,
        existing?.id ?? null,
      );
      if (taken) validation.errors.push(liveAwardTaken);
    }
    if (valid('scholarship_id') && valid('amount')) {
      const problem = await checkAwardCapacity(
        ctx,
        { scholarship_id: Number(record.scholarship_id), amount: record.amount as number | string },
        existing,
      );
      if (problem) validation.errors.push(problem);
    }
  }
}

/** What a constraint tripped by a concurrent write means (references are never deleted today). */
const constraints = {
  awards_live_key: liveAwardTaken,
  awards_award_cycle_fkey: {
    param: 'award_cycle_id',
    code: 'reference_not_found',
    message: 'does not name an existing award cycle',
  } satisfies FieldError,
  awards_scholarship_fkey: {
    param: 'scholarship_id',
    code: 'reference_not_found',
    message: 'does not name an existing scholarship',
  } satisfies FieldError,
  awards_student_fkey: {
    param: 'student_id',
    code: 'reference_not_found',
    message: 'does not name an existing student',
  } satisfies FieldError,
};

/**
 * An award in an archived cycle takes no change at all: 409 `resource_archived`, as the cycle
 * itself does. The cycle row is held FOR SHARE so it cannot be archived while the change commits.
 */
async function refuseArchived(ctx: CommandContext, existing: AwardRow): Promise<void> {
  const cycleStatus = await awardCycleStatus(
    ctx.db,
    ctx.institution.id,
    existing.award_cycle_id,
    shareLock(ctx),
  );
  if (cycleStatus === 'archived') {
    throw errors.resourceArchived(
      'This award belongs to an archived award cycle and takes no changes.',
    );
  }
}

const awardsResource: WritableResource<AwardRow, AwardFields> = {
  identity: awardIdentity,
  table: awardTable,
  shape: awardShape,
  defaults: awardDefaults,
  readOnly: readOnlyOf(awardResponse, awardShape),
  constraints,
  rules: awardRules,
  present: presentAward,
  guard: refuseArchived,
};

export const createAward = createCommand(awardsResource);
export const updateAwardCommand = updateCommand(awardsResource);
