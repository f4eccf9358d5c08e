import { sql } from 'slonik';
import type { CommandContext } from '../../commands/command.js';
import type { RecordCheck } from '../../commands/resourceCommands.js';
import { findInstruction } from './queries.js';

/**
 * A payment is a gift naming its recurring gift in `recurring_gift_id` (giving.md §6): a
 * recurring gift of the institution (else `reference_not_found`), of the gift's own donor, and,
 * when the gift is newly linked to it, not cancelled (else `invalid_value`). A paused one still
 * takes payments: money that arrived is recorded. A gift keeps the link it has even once its
 * recurring gift is cancelled, as a gift keeps a fund that has closed since.
 */
export async function checkPayment(
  ctx: CommandContext,
  check: RecordCheck<{ recurring_gift_id: number | null }>,
): Promise<void> {
  const { record, validation, existing, valid } = check;
  if (!valid('recurring_gift_id')) return;
  const id = record.recurring_gift_id as number;
  const linked = existing?.recurring_gift_id === id;
  if (linked && !validation.sent.has('donor_id')) return;
  const param = 'recurring_gift_id';
  // FOR SHARE, not KEY SHARE: a concurrent cancel (an UPDATE) waits for this payment to commit.
  const found = await findInstruction(
    ctx.db,
    ctx.institution.id,
    id,
    ctx.dryRun ? sql.fragment`` : sql.fragment`FOR SHARE`,
  );
  if (!found) {
    validation.errors.push({
      param,
      code: 'reference_not_found',
      message: 'does not name an existing recurring gift',
    });
  } else if (!linked && found.status === 'cancelled') {
    validation.errors.push({
      param,
      code: 'invalid_value',
      message: 'names a cancelled recurring gift, which takes no more payments',
    });
  } else if (valid('donor_id') && found.donor_id !== record.donor_id) {
    validation.errors.push({
      param,
      code: 'invalid_value',
      message: 'names a recurring gift of another donor; a payment is the same donor’s gift',
    });
  }
}
