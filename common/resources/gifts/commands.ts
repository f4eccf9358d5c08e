import {
  deleted,
  type Command,
  type CommandContext,
  type SingleStatementCreate,
  type WriteRequest,
} from '../../commands/command.js';
import {
  apiPath,
  createCommand,
  fieldsOf,
  findTarget,
  judgeRecord,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import type { FieldError } from '../../errors.js';
import { checkReference } from '../checks.js';
import { donorReference } from '../donors/schema.js';
import { fundReference } from '../funds/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { insertFragment } from '../table.js';
import { presentGift } from './present.js';
import { deleteGift } from './queries.js';
import { giftResponse } from './response.js';
import {
  giftDefaults,
  giftIdentity,
  giftShape,
  giftTable,
  type GiftFields,
  type GiftRow,
} from './schema.js';

/** The rule that needs no lookup: check_number only on checks. */
function checkNumberRule({ record, validation }: RecordCheck<GiftRow>): void {
  if (record.check_number !== null && record.type !== 'check' && !validation.invalid.has('type')) {
    validation.errors.push({
      param: 'check_number',
      code: 'not_allowed',
      message: 'is allowed only when type is check',
    });
  }
}

/** check_number, then a donor and an active fund of the institution where they are set. */
async function giftRules(ctx: CommandContext, check: RecordCheck<GiftRow>): Promise<void> {
  checkNumberRule(check);
  const { record, validation } = check;
  const sentAndValid = (name: 'donor_id' | 'fund_id') =>
    validation.sent.has(name) && check.valid(name);
  if (sentAndValid('donor_id')) {
    const problem = await checkReference(ctx, donorReference, Number(record.donor_id), 'donor_id');
    if (problem) validation.errors.push(problem);
  }
  if (sentAndValid('fund_id')) {
    const problem = await checkReference(ctx, fundReference, Number(record.fund_id), 'fund_id');
    if (problem) validation.errors.push(problem);
  }
}

const giftsResource: WritableResource<GiftRow, GiftFields> = {
  identity: giftIdentity,
  table: giftTable,
  shape: giftShape,
  defaults: giftDefaults,
  contextDefaults: (ctx) => ({ currency: ctx.institution.currency }),
  readOnly: readOnlyOf(giftResponse, giftShape),
  /** A donor or fund deleted by a concurrent write after the checks above passed. */
  constraints: {
    gifts_donor_fkey: {
      param: 'donor_id',
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    } satisfies FieldError,
    gifts_fund_fkey: {
      param: 'fund_id',
      code: 'reference_not_found',
      message: 'does not name an existing fund',
    } satisfies FieldError,
  },
  rules: giftRules,
  present: presentGift,
};

/**
 * A new gift whose body passes every rule that needs no lookup, and names no fund (a fund may be
 * closed, which only a lookup tells), can be inserted in one statement: the donor's foreign key
 * enforces what checkReference would (a donor of this institution; the key takes the same lock).
 * Anything else (null) goes through the full validation.
 */
function giftInOneStatement(
  ctx: Pick<CommandContext, 'institution'>,
  request: WriteRequest,
): SingleStatementCreate | null {
  const check = judgeRecord(ctx, giftsResource, request.body, null);
  checkNumberRule(check);
  if (check.validation.errors.length || check.record.fund_id !== null) return null;
  const fields = fieldsOf<GiftFields>(giftsResource, check.record);
  return {
    insert: (guard) => insertFragment(giftTable, ctx.institution.id, fields, guard),
    fields,
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
    if (!ctx.dryRun) await deleteGift(ctx.db, ctx.institution.id, existing.id);
    return deleted(giftIdentity.object, existing.id);
  },
};
