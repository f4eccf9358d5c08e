import type { CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import type { FieldError } from '../../errors.js';
import { checkReference } from '../checks.js';
import { toCents } from '../../money.js';
import { checkFundCapacity } from '../funds/capacity.js';
import { fundReference } from '../funds/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { presentScholarship } from './present.js';
import { committedByScholarship } from './queries.js';
import { scholarshipResponse } from './response.js';
import {
  scholarshipDefaults,
  scholarshipIdentity,
  scholarshipShape,
  scholarshipTable,
  type ScholarshipFields,
  type ScholarshipRow,
} from './schema.js';

/**
 * The fund a scholarship draws on: it must be an active fund of the institution when it is set
 * or changed (a scholarship whose fund was closed later stays editable). Moving a scholarship
 * that has live awards to another fund moves what they commit with it, so the new fund must have
 * room for them: its row is locked FOR UPDATE before anything else about it is read, exactly as an
 * award create does, and the scholarship itself is already locked, so no award of it can be
 * created or enlarged meanwhile.
 */
async function checkFund(
  ctx: CommandContext,
  fundId: number,
  existing: ScholarshipRow | null,
): Promise<FieldError | null> {
  let capacity: FieldError | null = null;
  if (existing) {
    const moving = await committedByScholarship(ctx.db, ctx.institution.id, existing.id);
    if (toCents(moving) > 0n) {
      capacity = await checkFundCapacity(ctx, fundId, moving, null, 'fund_id');
    }
  }
  return (await checkReference(ctx, fundReference, fundId, 'fund_id')) ?? capacity;
}

/** The fund rule, where the fund is set or changed. */
async function scholarshipRules(
  ctx: CommandContext,
  { record, validation, existing }: RecordCheck<ScholarshipRow>,
): Promise<void> {
  const fundId = record.fund_id;
  if (
    !validation.invalid.has('fund_id') &&
    typeof fundId === 'number' &&
    fundId !== existing?.fund_id
  ) {
    const problem = await checkFund(ctx, fundId, existing);
    if (problem) validation.errors.push(problem);
  }
}

/** A fund deleted by a concurrent write after the checks above passed (funds have no delete today). */
const constraints = {
  scholarships_fund_fkey: {
    param: 'fund_id',
    code: 'reference_not_found',
    message: 'does not name an existing fund',
  } satisfies FieldError,
};

const scholarshipsResource: WritableResource<ScholarshipRow, ScholarshipFields> = {
  identity: scholarshipIdentity,
  table: scholarshipTable,
  shape: scholarshipShape,
  defaults: scholarshipDefaults,
  readOnly: readOnlyOf(scholarshipResponse, scholarshipShape),
  constraints,
  rules: scholarshipRules,
  present: presentScholarship,
};

export const createScholarship = createCommand(scholarshipsResource);
export const updateScholarshipCommand = updateCommand(scholarshipsResource);
