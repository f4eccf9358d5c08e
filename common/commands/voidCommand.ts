import type { CommandContext, Command } from './command.js';
import { findTarget, type ResourceIdentity } from './resourceCommands.js';
import { errors } from '../errors.js';
import type { JsonObject } from '../json.js';
import type { Stored, Table } from '../resources/table.js';
import { text } from '../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../validation/validateBody.js';

/** A void is an audit event on money history: it must say why. */
export const voidShape: Shape = { reason: { schema: text(500), required: true } };

interface Voidable extends Stored {
  status: string;
  void_reason: string | null;
  voided_at: string | null;
}

/**
 * POST <path>/{id}/void of a money record (a gift, a receipt): from any other status to
 * `voided`, once and for good. The record is locked for the real write, so a void takes turns
 * with every other change of it; a second void is 409, then the body is judged (422).
 */
export function voidCommand<Row extends Voidable>(options: {
  identity: ResourceIdentity;
  table: Table<Row, object>;
  voided: Row['status'];
  /** The 409 message of a second void. */
  alreadyVoided: string;
  /** The real void, in the command's transaction: returns the record as it now is. */
  persist(ctx: CommandContext, record: Row, reason: string): Promise<Row>;
  present(row: Row): JsonObject;
}): Command {
  return {
    name: `${options.identity.name}.void`,
    async execute(ctx, request) {
      const record = await findTarget(ctx, request, options);
      if (record.status === options.voided)
        throw errors.invalidStateTransition('status', options.alreadyVoided);
      const validation = validateBody(voidShape, request.body);
      requireFields(validation.values, ['reason'], validation);
      if (validation.errors.length) throw errors.validationFailed(validation.errors);
      const reason = validation.values.reason as string;
      const row: Row = ctx.dryRun
        ? {
            ...record,
            status: options.voided,
            void_reason: reason,
            voided_at: ctx.now,
            updated_at: ctx.now,
          }
        : await options.persist(ctx, record, reason);
      return { status: 200, body: options.present(row) };
    },
  };
}
