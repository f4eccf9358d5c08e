import type { CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { alreadyInUse, checkUnique } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { centsToNumber, toCents } from '../../money.js';
import { presentFund } from './present.js';
import { committedAwards } from './queries.js';
import { fundDetailResponse } from './response.js';
import {
  fundDefaults,
  fundIdentity,
  fundShape,
  fundTable,
  type FundFields,
  type FundRow,
} from './schema.js';

/** The code's uniqueness, and a limit no lower than what live awards commit. */
async function fundRules(ctx: CommandContext, check: RecordCheck<FundRow>): Promise<void> {
  const { record, validation, existing } = check;
  await checkUnique(ctx, check, {
    table: 'funds',
    column: 'code',
    ignoreCase: false,
    what: 'fund',
  });
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
}

const fundsResource: WritableResource<FundRow, FundFields> = {
  identity: fundIdentity,
  table: fundTable,
  shape: fundShape,
  defaults: fundDefaults,
  readOnly: readOnlyOf(fundDetailResponse, fundShape),
  constraints: { funds_institution_code_key: alreadyInUse('code', 'fund') },
  rules: fundRules,
  present: presentFund,
};

export const createFund = createCommand(fundsResource);
export const updateFundCommand = updateCommand(fundsResource);
