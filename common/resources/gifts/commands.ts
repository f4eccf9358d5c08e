import {
  deleted,
  lockClause,
  pathId,
  pick,
  previewCreated,
  previewUpdated,
  type Command,
  type CommandContext,
} from '../../commands/command.js';
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

export const createGift: Command = {
  name: 'gifts.create',
  constraints,
  async execute(ctx, request) {
    const fields = await validateGift(ctx, request.body, null);
    const row = ctx.dryRun
      ? previewCreated(ctx, fields)
      : await insertGift(ctx.db, ctx.institution.id, fields);
    return { status: 201, body: presentGift(row), location: `/api/v1/gifts/${row.id}` };
  },
};

export const updateGiftCommand: Command = {
  name: 'gifts.update',
  constraints,
  async execute(ctx, request) {
    const id = pathId(request);
    const existing = id ? await findGift(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
    if (!existing) throw errors.notFound('gift');
    const fields = await validateGift(ctx, request.body, existing);
    const row = ctx.dryRun
      ? previewUpdated(ctx, existing, fields)
      : await updateGift(ctx.db, ctx.institution.id, existing.id, fields);
    return { status: 200, body: presentGift(row) };
  },
};

export const deleteGiftCommand: Command = {
  name: 'gifts.delete',
  async execute(ctx, request) {
    const id = pathId(request);
    const existing = id ? await findGift(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
    if (!existing) throw errors.notFound('gift');
    if (!ctx.dryRun) await deleteGift(ctx.db, ctx.institution.id, existing.id);
    return deleted('gift', existing.id);
  },
};
