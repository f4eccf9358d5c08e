import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { today } from '../../clock.js';
import { pathId, type Command, type CommandContext } from '../../commands/command.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { recordId } from '../../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../../validation/validateBody.js';
import { moveDonorLines } from '../campaigns/lines.js';
import type { ActionDescriptor } from '../descriptor.js';
import { relationshipTypeTable, relationshipTypes } from '../relationships/schema.js';
import { findRow, updateRow } from '../table.js';
import { donorsResource } from './commands.js';
import { presentDonor } from './present.js';
import { donorResponse } from './response.js';
import { holdDonors } from './queries.js';
import {
  communicationRestrictions,
  donorTable,
  maxContactPoints,
  organizationRoles,
  type DonorFields,
  type DonorRow,
} from './schema.js';

/** The fields whose source value a merge may prefer to the survivor's (constituents.md §5). */
export const preferableFields = [
  'first_name',
  'last_name',
  'organization_name',
  'email',
  'phone',
  'address',
  'external_id',
  'assigned_user_id',
  'household_id',
] as const;
type Preferable = (typeof preferableFields)[number];

const preferSchema = z.strictObject(
  Object.fromEntries(
    preferableFields.map((field) => [
      field,
      z.literal('source', { message: 'must be "source"' }).optional(),
    ]),
  ) as Record<Preferable, z.ZodOptional<z.ZodLiteral<'source'>>>,
  { message: 'must be an object' },
);

export const mergeShape: Shape = {
  source_id: { schema: recordId, required: true },
  prefer: { schema: preferSchema },
};

/** The records that named the source and now name the survivor, by kind. */
export interface Moved {
  gifts: number;
  soft_credits: number;
  pledges: number;
  recurring_gifts: number;
  receipts: number;
  relationships: number;
  consents: number;
}

type ListedEmail = DonorRow['emails'][number];
type ListedPhone = DonorRow['phones'][number];
type ListedAddress = DonorRow['addresses'][number];

/** The source's contact points that found no room on the survivor (10 per list). */
export interface Dropped {
  emails: ListedEmail[];
  phones: ListedPhone[];
  addresses: ListedAddress[];
}

/** Individuals, households and organization roles merge only within their own class. */
const roleClass = (role: string) =>
  organizationRoles.includes(role) ? 'organization' : role.toLowerCase();

const hasValue = (value: unknown) => value !== null && value !== undefined;

/**
 * Up to the limit, the entries of `extra` whose key is neither `primary`'s nor already listed;
 * the rest of the new ones are dropped.
 */
function joinList<T>(
  kept: readonly T[],
  extra: readonly T[],
  primary: string | null,
  key: (entry: T) => string,
): { list: T[]; dropped: T[] } {
  const seen = new Set([...(primary ? [primary] : []), ...kept.map(key)].filter((k) => k !== ''));
  const list = [...kept];
  const dropped: T[] = [];
  for (const entry of extra) {
    const own = key(entry);
    if (own !== '' && seen.has(own)) continue;
    seen.add(own);
    if (list.length < maxContactPoints) list.push(entry);
    else dropped.push(entry);
  }
  return { list, dropped };
}

const emailKey = (value: string | null) => (value ?? '').trim().toLowerCase();
const phoneKey = (value: string | null) => (value ?? '').replace(/\D/g, '');
const addressKey = (address: object | null) => (address ? JSON.stringify(address) : '');

/**
 * The survivor's fields after the merge: its own values, an empty one filled from the source,
 * the preferred ones the source's; tags and restrictions the union; deceased if either is. A
 * primary email, phone or address that loses joins the lists (the survivor's first, then the
 * source's), up to the limit; the rest is dropped.
 */
export function mergeFields(
  survivor: DonorRow,
  source: DonorRow,
  prefer: ReadonlySet<string>,
): { fields: DonorFields; dropped: Dropped } {
  const take = <K extends Preferable>(field: K): DonorRow[K] =>
    (prefer.has(field) && hasValue(source[field])) || !hasValue(survivor[field])
      ? source[field]
      : survivor[field];
  const email = take('email');
  const phone = take('phone');
  const address = take('address');
  const losing = <T>(value: T | null, winner: T | null, key: (v: T | null) => string): T[] =>
    hasValue(value) && key(value) !== key(winner) ? [value as T] : [];
  const emails = joinList<ListedEmail>(
    survivor.emails,
    [
      ...[...losing(survivor.email, email, emailKey), ...losing(source.email, email, emailKey)].map(
        (address): ListedEmail => ({ address, type: 'other', status: 'active' }),
      ),
      ...source.emails,
    ],
    emailKey(email),
    (entry) => emailKey(entry.address),
  );
  const phones = joinList<ListedPhone>(
    survivor.phones,
    [
      ...[...losing(survivor.phone, phone, phoneKey), ...losing(source.phone, phone, phoneKey)].map(
        (number): ListedPhone => ({ number, type: 'other', status: 'active' }),
      ),
      ...source.phones,
    ],
    phoneKey(phone),
    (entry) => phoneKey(entry.number),
  );
  const asListed = (entry: NonNullable<DonorRow['address']>): ListedAddress => ({
    line1: entry.line1 ?? null,
    line2: entry.line2 ?? null,
    city: entry.city ?? null,
    region: entry.region ?? null,
    postal_code: entry.postal_code ?? null,
    country: entry.country ?? null,
    type: 'other',
    status: 'active',
    seasonal_from: null,
    seasonal_to: null,
  });
  const addresses = joinList<ListedAddress>(
    survivor.addresses,
    [
      ...[
        ...losing(survivor.address, address, addressKey),
        ...losing(source.address, address, addressKey),
      ].map(asListed),
      ...source.addresses,
    ],
    null,
    (entry) => addressKey(entry),
  );
  const restrictions = new Set([
    ...survivor.communication_restrictions,
    ...source.communication_restrictions,
  ]);
  const deceased = survivor.status === 'deceased' || source.status === 'deceased';
  return {
    fields: {
      role: survivor.role,
      first_name: take('first_name'),
      last_name: take('last_name'),
      organization_name: take('organization_name'),
      email,
      external_id: take('external_id'),
      phone,
      address,
      assigned_user_id: take('assigned_user_id'),
      status: deceased ? 'deceased' : survivor.status,
      gives_anonymously: survivor.gives_anonymously,
      tag_ids: [...new Set([...survivor.tag_ids, ...source.tag_ids])],
      household_id: take('household_id'),
      deceased_on: deceased ? (survivor.deceased_on ?? source.deceased_on) : null,
      communication_restrictions: communicationRestrictions.filter((value) =>
        restrictions.has(value),
      ),
      emails: emails.list,
      phones: phones.list,
      addresses: addresses.list,
    },
    dropped: { emails: emails.dropped, phones: phones.dropped, addresses: addresses.dropped },
  };
}

const symmetricTypes = relationshipTypes.filter(
  (type) => relationshipTypeTable[type].reciprocal === type,
);

/**
 * The source's relationships that the merge drops: those with the survivor, and those that
 * would repeat a current relationship of the survivor of the same type with the same donor
 * (either order for a type that is its own reciprocal), when current themselves.
 */
function droppedRelationships(
  institutionId: number,
  sourceId: number,
  survivorId: number,
  day: string,
) {
  const current = (alias: string) =>
    sql.fragment`(${sql.identifier([alias, 'ends_on'])} IS NULL OR ${sql.identifier([alias, 'ends_on'])} >= ${day}::date)`;
  return sql.fragment`
    SELECT r.id FROM relationships r
    WHERE r.institution_id = ${institutionId} AND (r.donor_id = ${sourceId} OR r.related_donor_id = ${sourceId})
      AND (r.donor_id = ${survivorId} OR r.related_donor_id = ${survivorId}
        OR (${current('r')} AND EXISTS (
          SELECT 1 FROM relationships s
          WHERE s.institution_id = ${institutionId} AND s.type = r.type AND ${current('s')}
            AND ((s.donor_id = ${survivorId} AND r.donor_id = ${sourceId}
                  AND s.related_donor_id = r.related_donor_id)
              OR (s.related_donor_id = ${survivorId} AND r.related_donor_id = ${sourceId}
                  AND s.donor_id = r.donor_id)
              OR (r.type = ANY(${sql.array(symmetricTypes, 'text')})
                  AND ((s.donor_id = ${survivorId} AND r.related_donor_id = ${sourceId}
                        AND s.related_donor_id = r.donor_id)
                    OR (s.related_donor_id = ${survivorId} AND r.donor_id = ${sourceId}
                        AND s.donor_id = r.related_donor_id)))))))`;
}

const movedRow = z.object({
  gifts: z.number(),
  soft_credits: z.number(),
  pledges: z.number(),
  recurring_gifts: z.number(),
  receipts: z.number(),
  relationships: z.number(),
  consents: z.number(),
});

/**
 * What the merge moves, counted before it moves anything (the same reads for a dry run and the
 * real merge, under the real merge's locks): a soft credit to the source moves unless its gift
 * is, or becomes, the survivor's (then it is dropped).
 */
function countMoved(
  db: CommonQueryMethods,
  institutionId: number,
  sourceId: number,
  survivorId: number,
): Promise<Moved> {
  const of = (table: string) => sql.fragment`(SELECT count(*)::int FROM ${sql.identifier([table])}
    WHERE institution_id = ${institutionId} AND donor_id = ${sourceId})`;
  return db.one(sql.type(movedRow)`
    SELECT ${of('gifts')} AS gifts,
           (SELECT count(*)::int FROM gifts g
            WHERE g.institution_id = ${institutionId} AND g.soft_credit_donor_ids <> '{}'
              AND g.soft_credit_donor_ids @> ARRAY[${sourceId}::bigint]
              AND g.donor_id <> ALL(ARRAY[${sourceId}, ${survivorId}]::bigint[])) AS soft_credits,
           ${of('pledges')} AS pledges, ${of('recurring_gifts')} AS recurring_gifts,
           ${of('receipts')} AS receipts, ${of('consents')} AS consents,
           (SELECT count(*)::int FROM relationships
            WHERE institution_id = ${institutionId}
              AND (donor_id = ${sourceId} OR related_donor_id = ${sourceId})
              AND id NOT IN (${droppedRelationships(institutionId, sourceId, survivorId, today())})
           ) AS relationships`);
}

/**
 * The soft credits of the gifts that name either donor, rewritten: the source's become the
 * survivor's; a credit to the gift's own donor is dropped; two to the survivor on one gift become
 * one (the first's reason, the amounts summed, capped at the gift's amount, and so the base
 * amounts at the gift's). Run after the gifts moved.
 */
async function moveSoftCredits(
  db: CommonQueryMethods,
  institutionId: number,
  sourceId: number,
  survivorId: number,
): Promise<void> {
  await db.query(sql.unsafe`
    WITH credits AS (
      SELECT g.id, t.ordinality, t.credit, g.donor_id AS giver, g.amount, g.base_amount,
             CASE WHEN (t.credit ->> 'donor_id')::bigint = ${sourceId} THEN ${survivorId}
                  ELSE (t.credit ->> 'donor_id')::bigint END AS credited
      FROM gifts g, jsonb_array_elements(g.soft_credits) WITH ORDINALITY AS t(credit, ordinality)
      WHERE g.institution_id = ${institutionId} AND g.soft_credit_donor_ids <> '{}'
        AND g.soft_credit_donor_ids && ARRAY[${sourceId}, ${survivorId}]::bigint[]),
    combined AS (
      SELECT id, credited, min(ordinality) AS ordinality,
             jsonb_build_object(
               'donor_id', credited,
               'amount', least(sum((credit ->> 'amount')::numeric), min(amount)),
               'reason', (array_agg(credit ->> 'reason' ORDER BY ordinality))[1])
             || CASE WHEN bool_and(credit ? 'base_amount') THEN jsonb_build_object('base_amount',
                  least(sum((credit ->> 'base_amount')::numeric), min(base_amount)))
                ELSE '{}' END AS credit
      FROM credits WHERE credited <> giver
      GROUP BY id, credited),
    rewritten AS (
      SELECT c.id,
             coalesce(jsonb_agg(m.credit ORDER BY m.ordinality)
                      FILTER (WHERE m.credit IS NOT NULL), '[]') AS soft_credits,
             coalesce(array_agg(m.credited ORDER BY m.ordinality)
                      FILTER (WHERE m.credit IS NOT NULL), '{}') AS donor_ids
      FROM (SELECT DISTINCT id FROM credits) c
      LEFT JOIN combined m ON m.id = c.id
      GROUP BY c.id)
    UPDATE gifts g SET soft_credits = r.soft_credits, soft_credit_donor_ids = r.donor_ids,
                       updated_at = now()
    FROM rewritten r
    WHERE g.institution_id = ${institutionId} AND g.id = r.id
      AND (g.soft_credits IS DISTINCT FROM r.soft_credits
        OR g.soft_credit_donor_ids IS DISTINCT FROM r.donor_ids)`);
}

/** Everything that named the source names the survivor (constituents.md §5), in this transaction. */
async function moveRecords(
  db: CommonQueryMethods,
  institutionId: number,
  sourceId: number,
  survivorId: number,
  bothHouseholds: boolean,
): Promise<void> {
  const scope = sql.fragment`institution_id = ${institutionId}`;
  const repoint = (table: string, column = 'donor_id') => {
    const named = sql.identifier([column]);
    return db.query(sql.unsafe`
      UPDATE ${sql.identifier([table])} SET ${named} = ${survivorId}
      WHERE ${scope} AND ${named} = ${sourceId}`);
  };
  // Normal UPDATEs of gifts: whatever follows a gift's donor (report totals) follows them.
  await db.query(sql.unsafe`
    UPDATE gifts SET donor_id = ${survivorId}, updated_at = now()
    WHERE ${scope} AND donor_id = ${sourceId}`);
  await db.query(sql.unsafe`
    UPDATE gifts SET tribute_honoree_donor_id = ${survivorId}, updated_at = now()
    WHERE ${scope} AND tribute_honoree_donor_id = ${sourceId}`);
  await moveSoftCredits(db, institutionId, sourceId, survivorId);
  await moveDonorLines(db, institutionId, sourceId, survivorId);
  await db.query(sql.unsafe`
    UPDATE pledges SET donor_id = ${survivorId}, updated_at = now()
    WHERE ${scope} AND donor_id = ${sourceId}`);
  await db.query(sql.unsafe`
    UPDATE recurring_gifts SET donor_id = ${survivorId}, updated_at = now()
    WHERE ${scope} AND donor_id = ${sourceId}`);
  // A receipt's number, frozen name and address stay as issued: only its donor moves.
  await repoint('receipts');
  await repoint('consents');
  await db.query(sql.unsafe`
    DELETE FROM relationships
    WHERE ${scope} AND id IN (${droppedRelationships(institutionId, sourceId, survivorId, today())})`);
  await db.query(sql.unsafe`
    UPDATE relationships
    SET donor_id = CASE WHEN donor_id = ${sourceId} THEN ${survivorId} ELSE donor_id END,
        related_donor_id = CASE WHEN related_donor_id = ${sourceId} THEN ${survivorId}
                                ELSE related_donor_id END,
        updated_at = now()
    WHERE ${scope} AND (donor_id = ${sourceId} OR related_donor_id = ${sourceId})`);
  if (bothHouseholds) await repoint('donors', 'household_id');
  // Earlier tombstones of the source now point at its survivor: merged_into_id is always live.
  await repoint('donors', 'merged_into_id');
}

/** The source as a tombstone: merged into the survivor, its unique values kept aside. */
async function tombstone(
  db: CommonQueryMethods,
  institutionId: number,
  source: DonorRow,
  survivorId: number,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE donors
    SET status = 'merged', merged_into_id = ${survivorId}, merged_email = email,
        merged_external_id = external_id, email = NULL, external_id = NULL,
        household_id = NULL, deceased_on = NULL, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${source.id}`);
}

/** The body's source, judged against the survivor: a donor of the institution, mergeable. */
function judgeSource(survivor: DonorRow, source: DonorRow | null): FieldError | null {
  const problem = (code: FieldError['code'], message: string): FieldError => ({
    param: 'source_id',
    code,
    message,
  });
  if (!source) return problem('reference_not_found', 'does not name an existing donor');
  if (source.id === survivor.id)
    return problem('invalid_value', 'names the donor being merged into; name another donor');
  if (source.status === 'merged')
    return problem(
      'invalid_value',
      `names a donor already merged into donor ${source.merged_into_id}`,
    );
  if (source.status === 'erased') return problem('invalid_value', 'names a donor that is erased');
  if (roleClass(source.role) !== roleClass(survivor.role))
    return problem(
      'invalid_value',
      `names a donor of role ${source.role}, which cannot merge into a donor of role ${survivor.role}`,
    );
  return null;
}

/**
 * POST /donors/{id}/merge (constituents.md §5). The two donors are locked FOR UPDATE, lower id
 * first (holdDonors), before anything is read: a write naming the source that holds it commits
 * first (and its record is moved); one that comes after reads it merged and is refused. A dry run
 * reads the same rows and counts, and answers exactly what the merge would.
 */
export const mergeDonorsCommand: Command = {
  name: 'donors.merge',
  async execute(ctx: CommandContext, request) {
    const institutionId = ctx.institution.id;
    const survivorId = pathId(request);
    const validation = validateBody(mergeShape, request.body);
    requireFields(validation.values, ['source_id'], validation);
    const sourceId = validation.invalid.has('source_id')
      ? null
      : (validation.values.source_id as number | undefined);
    if (survivorId !== null)
      await holdDonors(ctx, sourceId ? [survivorId, sourceId] : [survivorId], 'update');
    const survivor = survivorId
      ? await findRow(ctx.db, donorTable, institutionId, survivorId)
      : null;
    if (!survivor) throw errors.notFound('donor');
    const refusal = errors.donorTombstone(survivor);
    if (refusal) throw refusal;
    const source = sourceId ? await findRow(ctx.db, donorTable, institutionId, sourceId) : null;
    if (sourceId) {
      const problem = judgeSource(survivor, source);
      if (problem) validation.errors.push(problem);
    }
    if (validation.errors.length || !source) throw errors.validationFailed(validation.errors);
    const prefer = new Set(Object.keys((validation.values.prefer as object | undefined) ?? {}));
    const { fields, dropped } = mergeFields(survivor, source, prefer);
    const moved = await countMoved(ctx.db, institutionId, source.id, survivor.id);
    let row: DonorRow;
    if (ctx.dryRun) row = { ...survivor, ...fields, updated_at: ctx.now };
    else {
      await tombstone(ctx.db, institutionId, source, survivor.id);
      row = await updateRow(ctx.db, donorTable, institutionId, survivor.id, fields);
      await moveRecords(
        ctx.db,
        institutionId,
        source.id,
        survivor.id,
        survivor.role === 'Household',
      );
      row = await donorsResource.afterWrite!(ctx, row, survivor);
    }
    const body: JsonObject = {
      ...presentDonor(row),
      moved: { ...moved },
      dropped: { ...dropped },
    };
    return {
      status: 200,
      body,
      eventObject: { ...presentDonor(row), merged_donor_id: source.id, moved: { ...moved } },
    };
  },
};

const count = (what: string) =>
  z.number().int().min(0).describe(`How many ${what} named the source and now name the survivor.`);

/** The answer of a merge: the survivor as an update answers it, with what moved and was dropped. */
export const donorMergeResponse = donorResponse.extend({
  moved: z.object({
    gifts: count('gifts'),
    soft_credits: count('soft credits (those dropped aside)'),
    pledges: count('pledges'),
    recurring_gifts: count('recurring gifts'),
    receipts: count('receipts'),
    relationships: count('relationships (those dropped aside)'),
    consents: count('consent records'),
  }),
  dropped: z
    .object({
      emails: donorResponse.shape.emails,
      phones: donorResponse.shape.phones,
      addresses: donorResponse.shape.addresses,
    })
    .describe('Contact points of the merge that found no room on the survivor (10 per list).'),
});

export const mergeDonorsAction: ActionDescriptor = {
  name: 'merge',
  happened: 'merged',
  command: mergeDonorsCommand,
  shape: mergeShape,
  defaults: {},
  answer: {
    component: 'DonorMerged',
    schema: donorMergeResponse,
    description:
      'The survivor after the merge, as an update answers it, with `moved` and `dropped`; on a dry run exactly what the merge would answer.',
  },
  text: {
    component: 'DonorMerge',
    summary: 'Merge another donor into this one',
    description: [
      'Merges the donor `source_id` into this one (the survivor), for good: **a merge cannot be undone**. Both must be of the same role class (Individuals; Households; Organization, Foundation and Corporation), different donors, and neither merged nor erased (422 `invalid_value` at `source_id`; `reference_not_found` for a donor that is not the institution’s). A merge into a merged or erased donor is 409 `donor_merged`.',
      'Fields: the survivor keeps its values; an empty one takes the source’s; `prefer` names the fields whose source value wins (when the source has one). The source’s primary `email`, `phone` and `address` that do not win join `emails`, `phones` and `addresses` (so does the survivor’s own, when the source’s wins), with the source’s listed ones, skipping repeats, up to 10 each: the rest are answered in `dropped`. Tags and communication restrictions are the union; the survivor is `deceased` if either was. The source’s `external_id` moves to the survivor when the survivor has none; either way `GET /donors?external_id=` and imports find the survivor by it, and by the source’s email.',
      'Everything that named the source names the survivor, in one transaction: gifts (and tribute honorees), soft credits (one to the gift’s own donor is dropped; two to the survivor on one gift become one, their amounts summed up to the gift’s amount), pledges, recurring gifts, receipts (number, frozen name and address unchanged), household members, relationships (those between the two are dropped, and a current one repeating a current relationship of the survivor), consents. Totals do not change: the survivor’s hard-credit giving is both donors’ before; fund, campaign, pledge and report totals stay the same.',
      'The source stays as a tombstone: `status` `merged`, `merged_into_id` the survivor, its `email` and `external_id` cleared. `GET /donors/{id}` answers it; lists leave it out unless `status=merged`; PATCH and DELETE of it are 409 `donor_merged`; a gift, soft credit, pledge, recurring gift or relationship naming it is 422 `reference_inactive`. A write naming the source that races the merge commits before it (and is moved) or is refused after it.',
      'Answers the survivor as an update does, with `moved` (how many records of each kind now name the survivor) and `dropped`. One `donor.merged` event, on the survivor, whose object carries `merged_donor_id` and `moved`; the moved records have no events of their own. A dry run answers exactly the same and writes nothing.',
    ].join('\n\n'),
    notes: {
      source_id: 'The donor merged into this one, which becomes a tombstone.',
      prefer:
        'The fields whose source value wins, each as `"source"`: any of ' +
        preferableFields.map((field) => `\`${field}\``).join(', ') +
        ' (another field is 422 `unknown_field` at `prefer.<field>`).',
    },
    conflicts: ['donor_merged'],
    example: { source_id: 2, prefer: { email: 'source' } },
  },
};
