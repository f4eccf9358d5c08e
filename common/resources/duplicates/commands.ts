import { sql } from 'slonik';
import type { Command } from '../../commands/command.js';
import { findTarget } from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { columnsOf } from '../table.js';
import { presentDuplicatePair } from './present.js';
import {
  dismissShape,
  duplicateIdentity,
  duplicatePairTable,
  type DuplicatePairRow,
} from './schema.js';

const pairs = { identity: duplicateIdentity, table: duplicatePairTable };

/**
 * POST /duplicates/{id}/dismiss: the two donors are not the same, and the pair is never listed
 * again, however their records change. The pair is locked for the real write, so a donor write
 * that would drop it waits and then finds it dismissed (the triggers keep dismissed pairs). A
 * second dismissal is 409, before the body is judged.
 */
export const dismissDuplicateCommand: Command = {
  name: `${duplicateIdentity.name}.dismiss`,
  async execute(ctx, request) {
    const pair = await findTarget(ctx, request, pairs);
    if (pair.dismissed_at !== null)
      throw errors.invalidStateTransition(
        'dismissed_at',
        'This pair is dismissed already; a dismissed pair is never listed again.',
      );
    const validation = validateBody(dismissShape, request.body);
    requireFields(validation.values, ['reason'], validation);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const reason = validation.values.reason as string;
    const row: DuplicatePairRow = ctx.dryRun
      ? { ...pair, dismissed_at: ctx.now, dismiss_reason: reason, updated_at: ctx.now }
      : await ctx.db.one(sql.type(duplicatePairTable.row)`
          UPDATE duplicate_pairs
          SET dismissed_at = now(), dismiss_reason = ${reason}, updated_at = now()
          WHERE institution_id = ${ctx.institution.id} AND id = ${pair.id}
          RETURNING ${columnsOf(duplicatePairTable)}`);
    return { status: 200, body: presentDuplicatePair(row) };
  },
};
