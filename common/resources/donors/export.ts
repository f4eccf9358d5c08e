import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { eventColumns, eventRow, presentEvent, type EventRow } from '../../events/stored.js';
import type { JsonObject } from '../../json.js';
import { consentTable, type ConsentRow } from '../consents/schema.js';
import { presentConsent } from '../consents/present.js';
import { consentResponse } from '../consents/response.js';
import type { RecordReadDescriptor } from '../descriptor.js';
import { presentGift } from '../gifts/present.js';
import { giftResponse } from '../gifts/response.js';
import { giftTable, type GiftRow } from '../gifts/schema.js';
import { presentPledge } from '../pledges/present.js';
import { pledgeResponse } from '../pledges/response.js';
import { pledgeTable, type PledgeRow } from '../pledges/schema.js';
import { presentReceipt } from '../receipts/present.js';
import { receiptResponse } from '../receipts/response.js';
import { receiptTable, type ReceiptRow } from '../receipts/schema.js';
import { presentRecurringGift } from '../recurringGifts/present.js';
import { recurringGiftResponse } from '../recurringGifts/response.js';
import { recurringGiftTable, type RecurringGiftRow } from '../recurringGifts/schema.js';
import { presentRelationship } from '../relationships/present.js';
import { relationshipResponse } from '../relationships/response.js';
import { relationshipTable, type RelationshipRow } from '../relationships/schema.js';
import { reference, timestamp } from '../responseFields.js';
import { columnsOf, findRow, type Stored, type Table } from '../table.js';
import { presentDonor } from './present.js';
import { findGiving, findMemberIds } from './queries.js';
import { donorDetailResponse, donorResponse } from './response.js';
import { donorTable, type DonorRow } from './schema.js';

/**
 * The most records of one kind an export lists: far beyond any one person's (a donor with 10,000
 * gifts is a large one), so that the document stays bounded.
 */
export const MAX_EXPORTED = 100_000;

/**
 * An event as `GET /events/{id}` answers it. Not event.ts's schema: that one lists every event
 * type, which the resources (this one among them) declare, so it cannot be loaded from here.
 */
const exportedEvent = z.object({
  id: z.string().describe('The event’s id, as `GET /events/{id}` takes it.'),
  object: z.literal('event'),
  type: z
    .string()
    .describe('What happened, `<object>.<what happened>`, as `GET /events` names it.'),
  created_at: timestamp,
  request_id: z.string().nullable(),
  api_key_id: z.string().nullable(),
  data: z.object({
    object: z.record(z.string(), z.unknown()),
    previous_attributes: z.record(z.string(), z.unknown()).optional(),
  }),
});

const listOf = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_EXPORTED);

export const donorExportResponse = z.object({
  object: z.literal('donor_export'),
  donor_id: reference('donor'),
  exported_at: timestamp.describe('When the export was read.'),
  donor: donorDetailResponse.describe(
    'The donor as `GET /donors/{id}` answers it: names, contact points (primary and listed), flags, household and giving.',
  ),
  merged_donors: listOf(donorResponse).describe(
    'The tombstones of the donors merged into this one (the same person, earlier).',
  ),
  relationships: listOf(relationshipResponse).describe(
    'Every relationship naming the donor, on either side, as written.',
  ),
  consents: listOf(consentResponse).describe('Every consent of the donor, oldest first.'),
  gifts: listOf(giftResponse).describe('The donor’s own gifts (hard credit), oldest first.'),
  soft_credits: listOf(giftResponse).describe(
    'Other donors’ gifts that soft-credit the donor, whole, oldest first.',
  ),
  tributes: listOf(giftResponse).describe(
    'Gifts made in honor or in memory of the donor (`tribute.honoree_donor_id`).',
  ),
  pledges: listOf(pledgeResponse),
  recurring_gifts: listOf(recurringGiftResponse),
  receipts: listOf(receiptResponse).describe(
    'Receipts issued to the donor, with their frozen name and address.',
  ),
  events: z
    .array(exportedEvent)
    .max(MAX_EXPORTED)
    .describe(
      'Stored events of the donor, of the donors merged into it, and of every record above, oldest first (kept `EVENT_RETENTION_DAYS`).',
    ),
});

async function rowsOf<Row extends Stored>(
  db: CommonQueryMethods,
  table: Table<Row, object>,
  institutionId: number,
  condition: FragmentSqlToken,
): Promise<Row[]> {
  const rows = await db.any(sql.type(table.row)`
    SELECT ${columnsOf(table)} FROM ${sql.identifier([table.name])}
    WHERE institution_id = ${institutionId} AND ${condition}
    ORDER BY id LIMIT ${MAX_EXPORTED}`);
  return [...(rows as readonly Row[])];
}

/** The events of the given records, oldest first: one scan per kind of record. */
async function eventsOf(
  db: CommonQueryMethods,
  institutionId: number,
  records: Record<string, readonly number[]>,
): Promise<JsonObject[]> {
  const kinds = Object.entries(records).filter(([, ids]) => ids.length);
  if (!kinds.length) return [];
  const rows = await db.any(sql.type(eventRow)`
    SELECT ${eventColumns} FROM events
    WHERE institution_id = ${institutionId} AND (${sql.join(
      kinds.map(
        ([objectType, ids]) =>
          sql.fragment`(object_type = ${objectType} AND object_id = ANY(${sql.array([...ids], 'int8')}))`,
      ),
      sql.fragment` OR `,
    )})
    ORDER BY seq LIMIT ${MAX_EXPORTED}`);
  return rows.map((row) => presentEvent(row as EventRow));
}

/**
 * GET /donors/{id}/export (constituents.md §6): every stored fact about the donor, as one
 * document, for a subject access request.
 */
export async function exportDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<JsonObject | null> {
  const donor = await findRow(db, donorTable, institutionId, id);
  if (!donor) return null;
  const memberIds =
    donor.role === 'Household' ? await findMemberIds(db, institutionId, id) : undefined;
  const tombstones = await rowsOf<DonorRow>(
    db,
    donorTable,
    institutionId,
    sql.fragment`merged_into_id = ${id}`,
  );
  const personIds = [id, ...tombstones.map((row) => row.id)];
  const relationships = await rowsOf<RelationshipRow>(
    db,
    relationshipTable,
    institutionId,
    sql.fragment`(donor_id = ${id} OR related_donor_id = ${id})`,
  );
  const consents = await rowsOf<ConsentRow>(
    db,
    consentTable,
    institutionId,
    sql.fragment`donor_id = ${id}`,
  );
  const gifts = await rowsOf<GiftRow>(db, giftTable, institutionId, sql.fragment`donor_id = ${id}`);
  const softCredits = await rowsOf<GiftRow>(
    db,
    giftTable,
    institutionId,
    sql.fragment`soft_credit_donor_ids <> '{}' AND soft_credit_donor_ids @> ARRAY[${id}::bigint]
                 AND donor_id <> ${id}`,
  );
  const tributes = await rowsOf<GiftRow>(
    db,
    giftTable,
    institutionId,
    sql.fragment`tribute_honoree_donor_id = ${id}`,
  );
  const pledges = await rowsOf<PledgeRow>(
    db,
    pledgeTable,
    institutionId,
    sql.fragment`donor_id = ${id}`,
  );
  const recurring = await rowsOf<RecurringGiftRow>(
    db,
    recurringGiftTable,
    institutionId,
    sql.fragment`donor_id = ${id}`,
  );
  const receipts = await rowsOf<ReceiptRow>(
    db,
    receiptTable,
    institutionId,
    sql.fragment`donor_id = ${id}`,
  );
  const giftIds = [...new Set([...gifts, ...softCredits, ...tributes].map((row) => row.id))];
  const ids = <T extends { id: number }>(rows: readonly T[]) => rows.map((row) => row.id);
  const events = await eventsOf(db, institutionId, {
    donor: personIds,
    relationship: ids(relationships),
    consent: ids(consents),
    gift: giftIds,
    pledge: ids(pledges),
    recurring_gift: ids(recurring),
    receipt: ids(receipts),
  });
  return {
    object: 'donor_export',
    donor_id: id,
    exported_at: new Date().toISOString(),
    donor: presentDonor(
      donor,
      await findGiving(db, institutionId, id, memberIds),
      memberIds,
    ) as JsonObject,
    merged_donors: tombstones.map((row) => presentDonor(row) as JsonObject),
    relationships: relationships.map((row) => presentRelationship(row) as JsonObject),
    consents: consents.map((row) => presentConsent(row) as JsonObject),
    gifts: gifts.map((row) => presentGift(row) as JsonObject),
    soft_credits: softCredits.map((row) => presentGift(row) as JsonObject),
    tributes: tributes.map((row) => presentGift(row) as JsonObject),
    pledges: pledges.map((row) => presentPledge(row) as JsonObject),
    recurring_gifts: recurring.map((row) => presentRecurringGift(row) as JsonObject),
    receipts: receipts.map((row) => presentReceipt(row) as JsonObject),
    events,
  };
}

export const donorExport: RecordReadDescriptor = {
  name: 'export',
  query: {},
  read: (db, institutionId, id) => exportDonor(db, institutionId, id),
  response: donorExportResponse,
  text: {
    component: 'DonorExport',
    operationId: 'exportDonor',
    summary: 'Export everything stored about a donor',
    description: [
      'Every stored fact about the donor as one JSON document, for a subject access request: the donor as `GET /donors/{id}` answers it (names, primary and listed contact points, flags, household, giving), the donors merged into it, its relationships (either side), consents, own gifts, other donors’ gifts that soft-credit it, gifts in its honor or memory, pledges, recurring gifts, receipts (with their frozen name and address), and the stored events of all of these, oldest first.',
      'Not paged: the document is the whole answer, with at most 100,000 records of each kind (far beyond any one person’s). An erased donor’s export shows what erasure kept. A donor of another institution is as absent as a missing one (404).',
    ].join('\n\n'),
  },
};
