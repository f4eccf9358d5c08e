import { sql } from 'slonik';
import {
  lockClause,
  pathId,
  pick,
  previewCreated,
  previewUpdated,
  type Command,
  type CommandContext,
} from '../../commands/command.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse } from '../checks.js';
import { presentFund } from './present.js';
import { findFund, insertFund, updateFund } from './queries.js';
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
    const taken = await ctx.db.exists(sql.unsafe`
      SELECT 1 FROM funds WHERE institution_id = ${ctx.institution.id} AND code = ${String(record.code)}
        AND id IS DISTINCT FROM ${existing?.id ?? null}`);
    if (taken) validation.errors.push(alreadyInUse('code', 'fund'));
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as FundFields;
}

export const createFund: Command = {
  name: 'funds.create',
  constraints,
  async execute(ctx, request) {
    const fields = await validateFund(ctx, request.body, null);
    const row = ctx.dryRun
      ? previewCreated(ctx, fields)
      : await insertFund(ctx.db, ctx.institution.id, fields);
    return { status: 201, body: presentFund(row), location: `/api/v1/funds/${row.id}` };
  },
};

export const updateFundCommand: Command = {
  name: 'funds.update',
  constraints,
  async execute(ctx, request) {
    const id = pathId(request);
    const existing = id ? await findFund(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
    if (!existing) throw errors.notFound('fund');
    const fields = await validateFund(ctx, request.body, existing);
    const row = ctx.dryRun
      ? previewUpdated(ctx, existing, fields)
      : await updateFund(ctx.db, ctx.institution.id, existing.id, fields);
    return { status: 200, body: presentFund(row) };
  },
};
