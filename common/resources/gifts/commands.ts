import { deleted, pick, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { checkReference } from '../checks.js';
import { presentGift } from './present.js';
import { deleteGift, findGift, giftInsert, insertGift, updateGift } from './queries.js';
import {
  giftDefaults,
  giftReadOnly,
  giftRequired,
  giftShape,
  type GiftFields,
  type GiftRow,
} from './schema.js';

const fieldNames = [
  'donor_id',
  'amount',
  'currency',
  'subject',
  'gift_date',
  'type',
  'check_number',
  'fund_id',
] as const;

/** The rules that need no lookup: shapes, required fields, and check_number only on checks. */
function judgeGift(
  ctx: Pick<CommandContext, 'institution'>,
  body: JsonObject,
  existing: GiftRow | null,
) {
  const validation = validateBody(giftShape, body, giftReadOnly);
  const record: Record<string, unknown> = {
    currency: ctx.institution.currency,
    ...(existing ?? giftDefaults),
    ...validation.values,
  };
  requireFields(record, giftRequired, validation);
  if (record.check_number !== null && record.type !== 'check' && !validation.invalid.has('type')) {
    validation.errors.push({
      param: 'check_number',
      code: 'not_allowed',
      message: 'is allowed only when type is check',
    });
  }
  return { validation, record };
}

async function validateGift(
  ctx: CommandContext,
  body: JsonObject,
  existing: GiftRow | null,
): Promise<GiftFields> {
  const { validation, record } = judgeGift(ctx, body, existing);
  const sentAndValid = (name: 'donor_id' | 'fund_id') =>
    validation.sent.has(name) && !validation.invalid.has(name) && record[name] !== null;
  if (sentAndValid('donor_id')) {
    const problem = await checkReference(ctx, 'donors', Number(record.donor_id), 'donor_id');
    if (problem) validation.errors.push(problem);
  }
  if (sentAndValid('fund_id')) {
    const problem = await checkReference(ctx, 'funds', Number(record.fund_id), 'fund_id');
    if (problem) validation.errors.push(problem);
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as GiftFields;
}

/**
 * A new gift whose body passes every rule that needs no lookup, and names no fund (a fund may be
 * closed, which only a lookup tells), can be inserted in one statement: the donor's foreign key
 * enforces what checkReference would (a donor of this institution; the key takes the same lock).
 * Anything else goes through validateGift.
 */
function validateGiftWithoutLookups(
  ctx: Pick<CommandContext, 'institution'>,
  body: JsonObject,
): GiftFields | null {
  const { validation, record } = judgeGift(ctx, body, null);
  if (validation.errors.length || record.fund_id !== null) return null;
  return pick(record, fieldNames) as GiftFields;
}

/** A donor or fund deleted by a concurrent write after the checks above passed. */
const constraints = {
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
};

const giftsResource: WritableResource<GiftRow, GiftFields> = {
  name: 'gifts',
  label: 'gift',
  path: '/api/v1/gifts',
  constraints,
  validate: validateGift,
  find: findGift,
  insert: insertGift,
  update: updateGift,
  present: presentGift,
  singleStatement: { validate: validateGiftWithoutLookups, insert: giftInsert },
};

export const createGift = createCommand(giftsResource);
export const updateGiftCommand = updateCommand(giftsResource);

export const deleteGiftCommand: Command = {
  name: 'gifts.delete',
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, giftsResource);
    if (!ctx.dryRun) await deleteGift(ctx.db, ctx.institution.id, existing.id);
    return deleted('gift', existing.id);
  },
};
