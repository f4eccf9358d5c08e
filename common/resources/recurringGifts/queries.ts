import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { recurringGiftStatuses } from './schema.js';

const instruction = z.object({ donor_id: z.number(), status: z.enum(recurringGiftStatuses) });

/** The donor and status of a recurring gift of the institution, or null. */
export function findInstruction(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken,
): Promise<z.infer<typeof instruction> | null> {
  return db.maybeOne(sql.type(instruction)`
    SELECT donor_id, status FROM recurring_gifts
    WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

/** Whether the donor has a recurring gift, in any status: each stays on record for good. */
export function donorHasRecurringGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM recurring_gifts
    WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

const codes = z.object({ campaign_id: z.number().nullable(), appeal_id: z.number().nullable() });

/** The record-level codes of a recurring gift: the defaults of its payments. */
export function recurringGiftCodes(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<z.infer<typeof codes> | null> {
  return db.maybeOne(sql.type(codes)`
    SELECT campaign_id, appeal_id FROM recurring_gifts
    WHERE institution_id = ${institutionId} AND id = ${id}`);
}
