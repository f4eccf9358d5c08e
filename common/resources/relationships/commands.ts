import { today } from '../../clock.js';
import { deleted, pathId, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import type { FieldError } from '../../errors.js';
import { readOnlyOf } from '../responseFields.js';
import { findRow } from '../table.js';
import { isCurrent, presentRelationship } from './present.js';
import {
  deleteRelationship,
  donorsWithCurrentPartner,
  lockDonorRoles,
  samePairIsCurrent,
} from './queries.js';
import { relationshipResponse } from './response.js';
import {
  partnerTypes,
  relationshipDefaults,
  relationshipIdentity,
  relationshipShape,
  relationshipTable,
  relationshipTypeTable,
  rolesFit,
  type RelationshipFields,
  type RelationshipRow,
  type RelationshipType,
} from './schema.js';

type RelationshipCheck = RecordCheck<RelationshipRow>;

const donorSides = ['donor_id', 'related_donor_id'] as const;

/**
 * The donors of a relationship never change: a new pair is a new relationship. Whether the
 * update tried to move it, which is refused on that alone.
 */
function keepDonors({ record, validation, existing, valid }: RelationshipCheck): boolean {
  if (!existing) return false;
  const moved = donorSides.filter((side) => valid(side) && record[side] !== existing[side]);
  validation.errors.push(
    ...moved.map((param) => ({
      param,
      code: 'not_allowed' as const,
      message: 'cannot change: delete the relationship and create one between the right donors',
    })),
  );
  return moved.length > 0;
}

/**
 * The two donors: each a donor of the institution, and not the same one. Answers their roles
 * once both are known (a real write holds them locked from here to its commit).
 */
async function checkDonors(
  ctx: CommandContext,
  check: RelationshipCheck,
): Promise<{ role: string; relatedRole: string } | null> {
  const { record, validation, valid } = check;
  const sides = donorSides.filter(valid).map((param) => ({ param, id: Number(record[param]) }));
  if (sides.length === 2 && sides[0]!.id === sides[1]!.id) {
    validation.errors.push({
      param: 'related_donor_id',
      code: 'not_allowed',
      message: 'must name another donor than donor_id',
    });
    return null;
  }
  const roles = await lockDonorRoles(
    ctx,
    sides.map((side) => side.id),
  );
  const missing: FieldError[] = sides
    .filter((side) => !roles.has(side.id))
    .map(({ param }) => ({
      param,
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    }));
  // A merged donor's relationships live on its survivor (constituents.md §5); an erased one
  // is no one to relate to any more (§6).
  const merged: FieldError[] = sides.flatMap(({ param, id }) => {
    const status = roles.get(id)?.status;
    return status === 'merged' || status === 'erased'
      ? [{ param, code: 'reference_inactive' as const, message: `names a donor that is ${status}` }]
      : [];
  });
  validation.errors.push(...missing, ...merged);
  if (missing.length || merged.length || sides.length < 2) return null;
  return { role: roles.get(sides[0]!.id)!.role, relatedRole: roles.get(sides[1]!.id)!.role };
}

/** The rules of constituents.md §2, on the merged record of a create or an update. */
async function relationshipRules(ctx: CommandContext, check: RelationshipCheck): Promise<void> {
  const { record, validation, existing, valid } = check;
  const moved = keepDonors(check);
  // YYYY-MM-DD strings compare like the dates they name.
  if (valid('starts_on') && valid('ends_on') && String(record.ends_on) < String(record.starts_on))
    validation.errors.push({
      param: 'ends_on',
      code: 'out_of_range',
      message: 'must be on or after starts_on',
    });
  const roles = moved ? null : await checkDonors(ctx, check);
  if (!roles || !valid('type')) return;
  const type = record.type as RelationshipType;
  if (!rolesFit(type, roles.role, roles.relatedRole)) {
    validation.errors.push({
      param: 'type',
      code: 'invalid_value',
      message: rolesMessage(type, roles.role, roles.relatedRole),
    });
    return;
  }
  // A relationship that ended before today conflicts with nothing.
  const day = today();
  const endsOn = valid('ends_on') ? String(record.ends_on) : null;
  if (validation.invalid.has('ends_on') || !isCurrent(endsOn, day)) return;
  const candidate = {
    exceptId: existing?.id ?? null,
    donorId: Number(record.donor_id),
    relatedDonorId: Number(record.related_donor_id),
    type,
    today: day,
  };
  if (await samePairIsCurrent(ctx.db, ctx.institution.id, candidate)) {
    validation.errors.push({
      param: 'type',
      code: 'already_in_use',
      message: `these two donors already have a current ${type} relationship`,
    });
    return;
  }
  if (!partnerTypes.includes(type)) return;
  const taken = await donorsWithCurrentPartner(ctx.db, ctx.institution.id, candidate);
  if (taken.length)
    validation.errors.push({
      param: 'type',
      code: 'already_in_use',
      message: `${taken.map((id) => `donor ${id}`).join(' and ')} already ${taken.length > 1 ? 'have' : 'has'} a current spouse or partner: end that relationship first (ends_on)`,
    });
}

function rolesMessage(type: RelationshipType, role: string, relatedRole: string): string {
  const needs =
    relationshipTypeTable[type].roles === 'individuals'
      ? 'two Individuals'
      : 'an Individual as donor_id and an Organization, Foundation or Corporation as related_donor_id';
  return `${type} joins ${needs} (here donor_id is ${role} and related_donor_id ${relatedRole})`;
}

const relationshipsResource: WritableResource<RelationshipRow, RelationshipFields> = {
  identity: relationshipIdentity,
  table: relationshipTable,
  shape: relationshipShape,
  defaults: relationshipDefaults,
  readOnly: readOnlyOf(relationshipResponse, relationshipShape),
  constraints: {
    relationships_donor_fkey: {
      param: 'donor_id',
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    },
    relationships_related_donor_fkey: {
      param: 'related_donor_id',
      code: 'reference_not_found',
      message: 'does not name an existing donor',
    },
  },
  rules: relationshipRules,
  present: presentRelationship,
};

export const createRelationship = createCommand(relationshipsResource);

const update = updateCommand(relationshipsResource);

/**
 * The generic update, with the relationship's donors locked first: every write that locks a
 * donor and a relationship (a donor's delete takes its relationships with it) takes the donor
 * first, so two of them never wait for each other. The donors of a relationship never change.
 */
export const updateRelationshipCommand: Command = {
  ...update,
  async execute(ctx, request) {
    const id = pathId(request);
    const seen = id ? await findRow(ctx.db, relationshipTable, ctx.institution.id, id) : null;
    if (seen && !ctx.dryRun) await lockDonorRoles(ctx, [seen.donor_id, seen.related_donor_id]);
    return update.execute(ctx, request);
  },
};

/** A relationship goes; its donors stay. */
export const deleteRelationshipCommand: Command = {
  name: `${relationshipIdentity.name}.delete`,
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, relationshipsResource);
    if (!ctx.dryRun) await deleteRelationship(ctx.db, ctx.institution.id, existing.id);
    return deleted(relationshipIdentity.object, existing.id);
  },
};
