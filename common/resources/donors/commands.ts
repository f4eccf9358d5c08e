import { sql } from 'slonik';
import { deleted, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  fieldsOf,
  findTarget,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError, type FieldErrorCode } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields } from '../../validation/validateBody.js';
import { alreadyInUse, checkReference, checkReferenceList, checkUnique } from '../checks.js';
import { donorHasStatements } from '../givingStatements/queries.js';
import { donorHasRecurringGifts } from '../recurringGifts/queries.js';
import { readOnlyOf } from '../responseFields.js';
import { tagReference } from '../tags/schema.js';
import { userReference } from '../users/schema.js';
import { presentDonor } from './present.js';
import { presentRecurringGift } from '../recurringGifts/present.js';
import {
  countMembers,
  deleteDonor,
  donorHasGifts,
  findHouseholdToJoin,
  householdTakesMember,
  pauseActiveRecurringGifts,
} from './queries.js';
import { donorDetailResponse } from './response.js';
import {
  communicationRestrictions,
  donorDefaults,
  donorIdentity,
  donorShape,
  donorTable,
  maxHouseholdMembers,
  organizationRoles,
  type DonorFields,
  type DonorRow,
  type ListedAddress,
  type ListedEmail,
  type ListedPhone,
} from './schema.js';

const inUse = () =>
  errors.resourceInUse('This donor has gifts, soft credits or pledges; delete or move them first.');

const givesRecurring = () =>
  errors.resourceInUse(
    'This donor has recurring gifts, which stay on record even when cancelled; the donor cannot be deleted.',
  );

const hasStatements = () =>
  errors.resourceInUse(
    'This donor has giving statements, which stay on record as issued; the donor cannot be deleted.',
  );

const hasMembers = () =>
  errors.resourceInUse(
    'This household has members; set their household_id to null (or to another household) first.',
  );

/**
 * constituents.md §1: `household_id` only for an Individual, naming a donor of the institution
 * that is a Household with room for another member. A real write holds the household FOR NO KEY
 * UPDATE until it commits: it is then neither deleted nor given another role meanwhile, and
 * another join to it waits, so the members counted after the lock are all there are
 * (findHouseholdToJoin: one statement). A real create judges it in its insert instead
 * (householdTakesMember), one statement fewer; where the insert refuses, the create is judged
 * again with the lookup, for the error. The household a donor already belongs to is not checked
 * again: it stays a Household while it has members.
 */
async function checkHousehold(ctx: CommandContext, check: RecordCheck<DonorRow>): Promise<void> {
  const { record, validation, existing } = check;
  if (!check.valid('household_id')) return;
  const householdId = Number(record.household_id);
  if (!validation.invalid.has('role') && record.role !== 'Individual') {
    validation.errors.push({
      param: 'household_id',
      code: 'not_allowed',
      message: 'is allowed only for an Individual',
    });
    return;
  }
  if (existing?.household_id === householdId) return;
  if (check.insertGuards) {
    check.insertGuards.push(
      householdTakesMember(ctx.institution.id, householdId, maxHouseholdMembers),
    );
    return;
  }
  const lock = ctx.dryRun ? sql.fragment`` : sql.fragment`FOR NO KEY UPDATE`;
  const household = await findHouseholdToJoin(ctx.db, ctx.institution.id, householdId, lock);
  const problem = (message: string, code: FieldErrorCode = 'invalid_value') =>
    validation.errors.push({ param: 'household_id', code, message });
  if (household === null) problem('does not name an existing donor', 'reference_not_found');
  else if (household.role !== 'Household') problem('names a donor that is not a Household');
  else if (household.status === 'merged' || household.status === 'erased')
    problem(`names a donor that is ${household.status}`, 'reference_inactive');
  else if ((household.members ?? 0) >= maxHouseholdMembers)
    problem(`names a household that has ${maxHouseholdMembers} members already`);
}

/** Which names a role needs or forbids (product.md §4). */
function applyRoleRules({ record, validation }: RecordCheck<DonorRow>): void {
  if (validation.invalid.has('role')) return;
  const role = String(record.role);
  if (role === 'Individual') requireFields(record, ['first_name', 'last_name'], validation);
  if (role === 'Household') requireFields(record, ['last_name'], validation);
  if (organizationRoles.includes(role)) requireFields(record, ['organization_name'], validation);
  if (
    role === 'Individual' &&
    record.organization_name &&
    !validation.invalid.has('organization_name')
  ) {
    validation.errors.push({
      param: 'organization_name',
      code: 'not_allowed',
      message: 'is not allowed for an Individual',
    });
  }
  if (role !== 'Individual' && record.status === 'deceased' && !validation.invalid.has('status')) {
    validation.errors.push({
      param: 'status',
      code: 'invalid_value',
      message: 'deceased applies only to an Individual',
    });
  }
}

/**
 * Each tag once, each a tag of the institution. Tags the donor already has are not checked
 * again: a tag being deleted meanwhile takes itself off the donor, and checking (locking) it
 * from here would deadlock with that delete.
 */
async function checkTags(ctx: CommandContext, check: RecordCheck<DonorRow>): Promise<void> {
  const { record, validation, existing } = check;
  if (!validation.sent.has('tag_ids') || !check.valid('tag_ids')) return;
  const ids = record.tag_ids as number[];
  const duplicates = ids.flatMap((id, index) =>
    ids.indexOf(id) < index
      ? [
          {
            param: `tag_ids.${index}`,
            code: 'invalid_value' as const,
            message: 'lists a tag twice',
          },
        ]
      : [],
  );
  validation.errors.push(...duplicates);
  const unchanged = new Set(existing?.tag_ids ?? []);
  validation.errors.push(
    ...(await checkReferenceList(ctx, tagReference, ids, 'tag_ids', unchanged)),
  );
}

/**
 * constituents.md §3: `deceased_on` only with `status` `deceased`. A PATCH that moves a donor
 * away from `deceased` without sending `deceased_on` clears it (storeDonor): the date belongs to
 * the status, and refusing would make every such PATCH send `"deceased_on": null` as well.
 */
function checkFlags({ record, validation, valid }: RecordCheck<DonorRow>): void {
  if (
    validation.sent.has('deceased_on') &&
    valid('deceased_on') &&
    !validation.invalid.has('status') &&
    record.status !== 'deceased'
  ) {
    validation.errors.push({
      param: 'deceased_on',
      code: 'not_allowed',
      message: 'is allowed only with status deceased',
    });
  }
  if (!validation.sent.has('communication_restrictions') || !valid('communication_restrictions'))
    return;
  const values = record.communication_restrictions as string[];
  values.forEach((value, index) => {
    if (values.indexOf(value) < index)
      validation.errors.push({
        param: `communication_restrictions.${index}`,
        code: 'invalid_value',
        message: 'lists a restriction twice',
      });
  });
}

/**
 * A listed value may not repeat the primary one or an earlier entry (constituents.md §3):
 * `already_in_use` at the repeat. `key` says when two values are the same; an empty key (a phone
 * without digits) repeats nothing.
 */
function checkRepeats(
  check: RecordCheck<DonorRow>,
  list: 'emails' | 'phones',
  primary: 'email' | 'phone',
  values: readonly string[],
  key: (value: string) => string,
): void {
  const { record, validation } = check;
  const primaryKey = check.valid(primary) ? key(String(record[primary])) : '';
  const seen = new Set(primaryKey === '' ? [] : [primaryKey]);
  const field = list === 'emails' ? 'address' : 'number';
  values.forEach((value, index) => {
    const own = key(value);
    if (own === '') return;
    if (seen.has(own))
      validation.errors.push({
        param: `${list}.${index}.${field}`,
        code: 'already_in_use',
        message:
          own === primaryKey
            ? `repeats the donor’s ${primary}`
            : `repeats an earlier entry of ${list}`,
      });
    seen.add(own);
  });
}

/**
 * The contact points beyond the primary ones (constituents.md §3): a seasonal address has its
 * window and no other address has one; no email or phone is listed twice or repeats the primary
 * one. Addresses may repeat: a seasonal entry is often the primary address for part of the year.
 * Judged on the merged record, so a PATCH of `email` alone cannot make a listed email a repeat.
 */
function checkContactPoints(check: RecordCheck<DonorRow>): void {
  const { record, validation } = check;
  if (check.valid('emails'))
    checkRepeats(
      check,
      'emails',
      'email',
      (record.emails as ListedEmail[]).map((entry) => entry.address),
      (value) => value.trim().toLowerCase(),
    );
  if (check.valid('phones'))
    checkRepeats(
      check,
      'phones',
      'phone',
      (record.phones as ListedPhone[]).map((entry) => entry.number),
      (value) => value.replace(/\D/g, ''),
    );
  if (!validation.sent.has('addresses') || !check.valid('addresses')) return;
  (record.addresses as ListedAddress[]).forEach((entry, index) => {
    for (const end of ['seasonal_from', 'seasonal_to'] as const) {
      const given = entry[end] !== undefined && entry[end] !== null;
      if (entry.type === 'seasonal' && !given)
        validation.errors.push({
          param: `addresses.${index}.${end}`,
          code: 'required',
          message: 'is required for a seasonal address',
        });
      if (entry.type !== 'seasonal' && given)
        validation.errors.push({
          param: `addresses.${index}.${end}`,
          code: 'not_allowed',
          message: 'is allowed only for a seasonal address',
        });
    }
  });
}

/** Every key of a listed address present, as it is answered. */
const storedAddress = (entry: ListedAddress): DonorRow['addresses'][number] => ({
  line1: entry.line1 ?? null,
  line2: entry.line2 ?? null,
  city: entry.city ?? null,
  region: entry.region ?? null,
  postal_code: entry.postal_code ?? null,
  country: entry.country ?? null,
  type: entry.type,
  status: entry.status ?? 'active',
  seasonal_from: entry.seasonal_from ?? null,
  seasonal_to: entry.seasonal_to ?? null,
});

/** The stored fields: restrictions in their one order, `deceased_on` only while deceased. */
function storeDonor(record: Record<string, unknown>): DonorFields {
  const fields = fieldsOf<DonorFields>(donorsResource, record);
  const restrictions = new Set(fields.communication_restrictions);
  return {
    ...fields,
    communication_restrictions: communicationRestrictions.filter((value) =>
      restrictions.has(value),
    ),
    deceased_on: fields.status === 'deceased' ? fields.deceased_on : null,
    emails: (fields.emails as ListedEmail[]).map(({ address, type, status }) => ({
      address,
      type,
      status: status ?? 'active',
    })),
    phones: (fields.phones as ListedPhone[]).map(({ number, type, status }) => ({
      number,
      type,
      status: status ?? 'active',
    })),
    addresses: (fields.addresses as ListedAddress[]).map(storedAddress),
  };
}

/**
 * A donor becoming deceased by an update pauses its active recurring gifts in the same
 * transaction, each announced by its own `recurring_gift.updated` (integration.md §1). A donor
 * created deceased has none; one already deceased has had its gifts paused already.
 */
async function pauseGivingOfDeceased(
  ctx: CommandContext,
  row: DonorRow,
  existing: DonorRow | null,
): Promise<DonorRow> {
  if (!existing || existing.status === 'deceased' || row.status !== 'deceased') return row;
  for (const paused of await pauseActiveRecurringGifts(ctx.db, ctx.institution.id, row.id))
    ctx.consequences?.push({
      objectType: 'recurring_gift',
      happened: 'updated',
      object: presentRecurringGift(paused),
    });
  return row;
}

/**
 * The role's names, a unique email and external id, an active assigned user, the tags and the
 * household; a Household with members keeps its role.
 */
async function donorRules(ctx: CommandContext, check: RecordCheck<DonorRow>): Promise<void> {
  // The household is locked (findTarget): no member joins while its members are counted.
  const { existing } = check;
  if (
    existing?.role === 'Household' &&
    check.valid('role') &&
    check.record.role !== 'Household' &&
    (await countMembers(ctx.db, ctx.institution.id, existing.id)) > 0
  )
    throw hasMembers();
  applyRoleRules(check);
  await checkUnique(ctx, check, {
    table: 'donors',
    column: 'email',
    ignoreCase: true,
    what: 'donor',
  });
  await checkUnique(ctx, check, {
    table: 'donors',
    column: 'external_id',
    ignoreCase: false,
    what: 'donor',
  });
  const { record, validation } = check;
  if (validation.sent.has('assigned_user_id') && check.valid('assigned_user_id')) {
    const problem = await checkReference(
      ctx,
      userReference,
      Number(record.assigned_user_id),
      'assigned_user_id',
    );
    if (problem) validation.errors.push(problem);
  }
  await checkTags(ctx, check);
  await checkHousehold(ctx, check);
  checkFlags(check);
  checkContactPoints(check);
}

/** A merged or erased donor is a tombstone (constituents.md §5–6): no write changes it again. */
export function refuseMerged(_ctx: CommandContext, existing: DonorRow): Promise<void> {
  const tombstone = errors.donorTombstone(existing);
  if (tombstone) throw tombstone;
  return Promise.resolve();
}

const emailOmitted = (body: JsonObject) =>
  body.email === undefined ||
  body.email === null ||
  (typeof body.email === 'string' && body.email.trim() === '');

const donorsResource: WritableResource<DonorRow, DonorFields> = {
  identity: donorIdentity,
  table: donorTable,
  shape: donorShape,
  defaults: donorDefaults,
  readOnly: readOnlyOf(donorDetailResponse, donorShape),
  constraints: {
    donors_institution_email_key: alreadyInUse('email', 'donor'),
    donors_institution_external_id_key: alreadyInUse('external_id', 'donor'),
    donors_assigned_user_fkey: {
      param: 'assigned_user_id',
      code: 'reference_not_found',
      message: 'does not name an existing user',
    } satisfies FieldError,
    donors_household_fkey: {
      param: 'household_id',
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    } satisfies FieldError,
  },
  rules: donorRules,
  judgesInInsert: true,
  store: storeDonor,
  afterWrite: pauseGivingOfDeceased,
  guard: refuseMerged,
  present: presentDonor,
};

export { donorsResource };
export const createDonor = createCommand(donorsResource, {
  requiresIdempotencyKey: (request) => emailOmitted(request.body),
});
export const updateDonorCommand = updateCommand(donorsResource);

export const deleteDonorCommand: Command = {
  name: `${donorIdentity.name}.delete`,
  constraints: {
    gifts_donor_fkey: inUse,
    pledges_donor_fkey: inUse,
    recurring_gifts_donor_fkey: () => givesRecurring(),
    giving_statements_donor_fkey: hasStatements,
    donors_household_fkey: hasMembers,
  },
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, donorsResource);
    await refuseMerged(ctx, existing);
    if (await donorHasGifts(ctx.db, ctx.institution.id, existing.id)) throw inUse();
    if (await donorHasRecurringGifts(ctx.db, ctx.institution.id, existing.id))
      throw givesRecurring();
    if (await donorHasStatements(ctx.db, ctx.institution.id, existing.id)) throw hasStatements();
    if ((await countMembers(ctx.db, ctx.institution.id, existing.id)) > 0) throw hasMembers();
    if (!ctx.dryRun) await deleteDonor(ctx.db, ctx.institution.id, existing.id);
    return deleted(donorIdentity.object, existing.id);
  },
};
