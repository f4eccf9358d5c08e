import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { pathId, type Command } from '../../commands/command.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { text } from '../../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../../validation/validateBody.js';
import type { ActionDescriptor } from '../descriptor.js';
import { findRow } from '../table.js';
import { ERASED_NAME, eraseRecords, eraseStoredCopies, findPerson } from './erasure.js';
import { presentDonor } from './present.js';
import { findGiving, findMemberIds, holdDonors } from './queries.js';
import { donorTable, type DonorRow } from './schema.js';

export const eraseShape: Shape = { reason: { schema: text(500), required: true } };

const commitmentsRow = z.object({ recurring_gifts: z.number(), pledges: z.number() });

/** What keeps a donor from being erased: giving it has promised and not yet given. */
function findCommitments(db: CommonQueryMethods, institutionId: number, donorId: number) {
  return db.one(sql.type(commitmentsRow)`
    SELECT (SELECT count(*)::int FROM recurring_gifts
            WHERE institution_id = ${institutionId} AND donor_id = ${donorId}
              AND status = 'active') AS recurring_gifts,
           (SELECT count(*)::int FROM pledges
            WHERE institution_id = ${institutionId} AND donor_id = ${donorId}
              AND status = 'open') AS pledges`);
}

/** The donor row as erasure leaves it (eraseRecords writes the same). */
function erasedRow(donor: DonorRow, now: string): DonorRow {
  const erased = (value: string | null) => (value === null ? null : ERASED_NAME);
  return {
    ...donor,
    first_name: erased(donor.first_name),
    last_name: erased(donor.last_name),
    organization_name: erased(donor.organization_name),
    email: null,
    phone: null,
    address: null,
    external_id: null,
    emails: [],
    phones: [],
    addresses: [],
    deceased_on: null,
    status: 'erased',
    updated_at: now,
  };
}

/**
 * POST /donors/{id}/erase (constituents.md §6). The donor is held FOR UPDATE (holdDonors, the one
 * lock order), so a gift or pledge naming it commits first or reads it erased after; a dry run
 * reads the same rows, answers the same donor and writes nothing.
 */
export const eraseDonorCommand: Command = {
  name: 'donors.erase',
  async execute(ctx, request) {
    const institutionId = ctx.institution.id;
    const id = pathId(request);
    if (id !== null) await holdDonors(ctx, [id], 'update');
    const donor = id ? await findRow(ctx.db, donorTable, institutionId, id) : null;
    if (!donor) throw errors.notFound('donor');
    const tombstone = errors.donorTombstone(donor);
    if (tombstone) throw tombstone;
    const validation = validateBody(eraseShape, request.body);
    requireFields(validation.values, ['reason'], validation);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const open = await findCommitments(ctx.db, institutionId, donor.id);
    if (open.recurring_gifts || open.pledges)
      throw errors.resourceInUse(
        `This donor has ${open.recurring_gifts} active recurring gift(s) and ${open.pledges} open pledge(s): cancel or close them before erasing it.`,
      );
    if (!ctx.dryRun) {
      const { person } = await findPerson(ctx.db, institutionId, donor);
      await eraseRecords(ctx.db, institutionId, person);
      await eraseStoredCopies(ctx.db, institutionId, person);
    }
    const row = ctx.dryRun
      ? erasedRow(donor, ctx.now)
      : (await findRow(ctx.db, donorTable, institutionId, donor.id))!;
    const memberIds =
      row.role === 'Household' ? await findMemberIds(ctx.db, institutionId, row.id) : undefined;
    const body = presentDonor(
      row,
      await findGiving(ctx.db, institutionId, row.id, memberIds),
      memberIds,
    ) as JsonObject;
    return {
      status: 200,
      body,
      eventObject: { ...presentDonor(row), reason: validation.values.reason as string },
    };
  },
};

export const eraseDonorAction: ActionDescriptor = {
  name: 'erase',
  happened: 'erased',
  command: eraseDonorCommand,
  shape: eraseShape,
  defaults: {},
  text: {
    component: 'DonorErase',
    summary: 'Erase a donor’s personal data',
    description: [
      'Answers an erasure request (the right to be forgotten), for good: **an erasure cannot be undone**. The donor stays, so that its gifts keep their donor and its money stays in every total (funds, campaigns, pledges, reports, a household’s giving), but it is no one any more: its names become `"Erased"`; `email`, `phone`, `address`, `emails`, `phones`, `addresses`, `external_id` and `deceased_on` are cleared; `status` becomes `erased`. The same goes for the donors merged into it (the same person under earlier records).',
      'Free text about the person goes too: relationship and pledge notes, consent statements, the honoree name of a tribute to it, and dismissed duplicate pairs. Beyond its records, erasure reaches the stored copies that name it: stored events (and so webhook deliveries not yet made), stored idempotency answers, and rows of import files (and so `errors.csv`), each kept for a bounded time (`EVENT_RETENTION_DAYS`, 24 hours, `IMPORT_FILE_RETENTION_DAYS`). **Receipts keep their frozen name and address**: they are tax records the law obliges the institution to keep.',
      'Afterwards the donor is a tombstone, as a merged one is: `GET /donors/{id}` answers it; lists, duplicate matching and the donor reports (`/reports/lybunt`, `/reports/sybunt`, `/reports/first-time-donors`) leave it out (lists unless they filter on `status=erased`); PATCH, DELETE, consents, another erasure and a merge into it are 409 `donor_merged`; a gift, soft credit, tribute honoree, pledge, recurring gift, relationship or household naming it is 422 `reference_inactive`; a merge naming it as `source_id` is 422 `invalid_value`.',
      'Refused with 409 `resource_in_use` while the donor has an active recurring gift or an open pledge: cancel or close them first. Answers the donor as `GET /donors/{id}` does; one `donor.erased` event, carrying the erased donor and `reason` (no personal data). A dry run answers exactly the same and writes nothing.',
    ].join('\n\n'),
    notes: {
      reason:
        'Why the donor is erased (the request’s reference, say); at most 500 characters. Kept in the `donor.erased` event: write no personal data in it.',
    },
    conflicts: ['resource_in_use', 'donor_merged'],
    example: { reason: 'Erasure request 2026-014' },
  },
};
