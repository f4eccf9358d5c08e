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
import { deleteGift, findGift, insertGift, updateGift } from './queries.js';
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

async function validateGift(
  ctx: CommandContext,
  body: JsonObject,
  existing: GiftRow | null,
): Promise<GiftFields> {
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
