import { sql, type CommonQueryMethods } from 'slonik';
import { centsToNumber, toCents } from '../../money.js';
import { writeGiftLines } from '../campaigns/lines.js';
import { giftTable, type GiftRow } from '../gifts/schema.js';
import { settlePledge } from '../pledges/queries.js';
import { columnsOf, insertRow } from '../table.js';
import { giftRefundTable, type GiftRefundFields, type GiftRefundRow } from './schema.js';

/**
 * A receipt states the amount given, so a refund or a void of its gift makes it wrong: it is
 * voided in the same transaction (its number stays used; the gift may be receipted again).
 */
export async function voidIssuedReceipt(
  db: CommonQueryMethods,
  institutionId: number,
  giftId: number,
  reason: string,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE receipts SET status = 'void', void_reason = ${reason}, voided_at = now(), updated_at = now()
    WHERE institution_id = ${institutionId} AND gift_id = ${giftId} AND status = 'issued'`);
}

/**
 * Records a refund of a gift the caller holds locked (FOR UPDATE), so the gift's totals and
 * designations read before are still the gift's: the refund row, then what the gift and each
 * designation gave back in one UPDATE, then its receipt. Answers the refund and the gift as it
 * now is (the refund's event carries the gift).
 */
export async function recordRefund(
  db: CommonQueryMethods,
  institutionId: number,
  gift: GiftRow,
  fields: GiftRefundFields,
): Promise<{ refund: GiftRefundRow; gift: GiftRow }> {
  const row = await insertRow(db, giftRefundTable, institutionId, fields);
  const back = new Map(fields.designations.map((part) => [part.fund_id, part]));
  const designations = gift.designations.map((part) => {
    const given = back.get(part.fund_id);
    if (!given) return part;
    const refunded = {
      ...part,
      amount_refunded: centsToNumber(toCents(part.amount_refunded) + toCents(given.amount)),
    };
    return given.base_amount === undefined
      ? refunded
      : {
          ...refunded,
          base_amount_refunded: centsToNumber(
            toCents(part.base_amount_refunded ?? 0) + toCents(given.base_amount),
          ),
        };
  });
  const refunded = await db.one(sql.type(giftTable.row)`
    UPDATE gifts
    SET amount_refunded = amount_refunded + ${String(fields.amount)}::numeric,
        base_amount_refunded = base_amount_refunded
          + ${fields.base_amount === null ? '0' : String(fields.base_amount)}::numeric,
        designations = ${JSON.stringify(designations)}::jsonb, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${gift.id}
    RETURNING ${columnsOf(giftTable)}`);
  await writeGiftLines(db, institutionId, refunded as GiftRow);
  await voidIssuedReceipt(db, institutionId, gift.id, `The gift was refunded (refund ${row.id}).`);
  // A refunded payment gives its amount back to its pledge's balance.
  if (gift.pledge_id !== null) await settlePledge(db, institutionId, gift.pledge_id);
  return { refund: row, gift: refunded as GiftRow };
}
