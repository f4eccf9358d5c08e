import { sql, type CommonQueryMethods } from 'slonik';
import { voidCommand, voidShape } from '../../commands/voidCommand.js';
import { writeGiftLines } from '../campaigns/lines.js';
import type { ActionDescriptor } from '../descriptor.js';
import { voidIssuedReceipt } from '../giftRefunds/queries.js';
import { settlePledge } from '../pledges/queries.js';
import { findRow } from '../table.js';
import { presentGift } from './present.js';
import { giftIdentity, giftTable, type GiftRow } from './schema.js';

async function voidGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  reason: string,
): Promise<GiftRow> {
  await db.query(sql.unsafe`
    UPDATE gifts SET status = 'voided', void_reason = ${reason}, voided_at = now(), updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}`);
  await voidIssuedReceipt(db, institutionId, id, `The gift was voided: ${reason}`);
  const gift = (await findRow(db, giftTable, institutionId, id))!;
  await writeGiftLines(db, institutionId, gift);
  // A voided payment gives its amount back to its pledge's balance.
  if (gift.pledge_id !== null) await settlePledge(db, institutionId, gift.pledge_id);
  return gift;
}

/** POST /gifts/{id}/void (giving.md §3): posted → voided, once and for good. */
export const voidGiftCommand = voidCommand({
  identity: giftIdentity,
  table: giftTable,
  voided: 'voided',
  alreadyVoided: 'This gift is already voided; a void is final and cannot be repeated or undone.',
  persist: (ctx, gift, reason) => voidGift(ctx.db, ctx.institution.id, gift.id, reason),
  present: presentGift,
});

export const voidGiftAction: ActionDescriptor = {
  name: 'void',
  happened: 'voided',
  command: voidGiftCommand,
  shape: voidShape,
  defaults: {},
  text: {
    component: 'GiftVoid',
    summary: 'Void a gift',
    description: [
      'Marks a gift entered in error: `status` becomes `voided`, `net_amount` 0, and `void_reason` and `voided_at` are set. The gift stays visible (money history is append-only) but leaves every total: fund `totals.gifts_received`, donor `giving` (its soft credits included) and the reports count only posted gifts.',
      'A voided gift cannot be refunded or receipted (422 `invalid_value` at `gift_id`) nor matched (422 `invalid_value` at `matches_gift_id`); its money fields cannot change and it cannot be deleted (409 `gift_locked`). Its issued receipt, if any, is voided in the same transaction. A void is final: a second void is 409 `invalid_state_transition`.',
      'Answers the gift as `GET /gifts/{id}` does.',
    ].join('\n\n'),
    notes: { reason: 'Why the gift was entered in error; at most 500 characters.' },
    conflicts: ['invalid_state_transition'],
    example: { reason: 'Entered twice by mistake' },
  },
};
