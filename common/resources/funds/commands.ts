import { pick, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse, isTaken } from '../checks.js';
import { centsToNumber, toCents } from './capacity.js';
import { presentFund } from './present.js';
import { committedAwards, findFund, insertFund, updateFund } from './queries.js';
import {
  fundDefaults,
  fundReadOnly,
  fundRequired,
  fundShape,
  type FundFields,
  type FundRow,
} from './schema.js';

const fieldNames = [
  'name',
  'code',
  'description',
  'restriction',
  'endowed',
  'award_limit',
  'status',
] as const;
const constraints = { funds_institution_code_key: alreadyInUse('code', 'fund') };

async function validateFund(
  ctx: CommandContext,
  body: JsonObject,
  existing: FundRow | null,
): Promise<FundFields> {
  const validation = validateBody(fundShape, body, fundReadOnly);
  const record: Record<string, unknown> = { ...(existing ?? fundDefaults), ...validation.values };
  requireFields(record, fundRequired, validation);
  if (validation.sent.has('code') && !validation.invalid.has('code')) {
    const taken = await isTaken(ctx, 'funds.code', String(record.code), existing?.id ?? null);
    if (taken) validation.errors.push(alreadyInUse('code', 'fund'));
  }
  // A limit may not fall below what live awards already commit. The update holds the fund row
  // FOR UPDATE (taken before this runs), and every write that raises what the fund commits takes
  // the same lock first, so the sum cannot grow between this check and the commit.
  const limit = record.award_limit;
  if (
    existing &&
    validation.sent.has('award_limit') &&
    !validation.invalid.has('award_limit') &&
    (typeof limit === 'number' || typeof limit === 'string') &&
    (existing.award_limit === null || toCents(limit) < toCents(existing.award_limit))
  ) {
    const committed = toCents(await committedAwards(ctx.db, ctx.institution.id, existing.id));
    if (committed > toCents(limit)) {
      validation.errors.push({
        param: 'award_limit',
        code: 'insufficient_fund_balance',
        message: `is below the ${centsToNumber(committed)} that live awards already commit`,
      });
    }
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as FundFields;
}

const fundsResource: WritableResource<FundRow, FundFields> = {
  name: 'funds',
  label: 'fund',
  path: '/api/v1/funds',
  constraints,
  validate: validateFund,
  find: findFund,
  insert: insertFund,
  update: updateFund,
  present: presentFund,
};

export const createFund = createCommand(fundsResource);
export const updateFundCommand = updateCommand(fundsResource);
