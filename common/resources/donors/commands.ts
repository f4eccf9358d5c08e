import { deleted, pick, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody, type BodyValidation } from '../../validation/validateBody.js';
import { alreadyInUse, checkReference, isTaken } from '../checks.js';
import { presentDonor } from './present.js';
import { deleteDonor, donorHasGifts, findDonor, insertDonor, updateDonor } from './queries.js';
import {
  donorDefaults,
  donorReadOnly,
  donorShape,
  organizationRoles,
  type DonorFields,
  type DonorRow,
} from './schema.js';

const fieldNames = [
  'role',
  'first_name',
  'last_name',
  'organization_name',
  'email',
  'phone',
  'address',
  'assigned_user_id',
  'status',
  'gives_anonymously',
] as const;

const inUse = () => errors.resourceInUse('This donor has gifts; delete or move them first.');

/** Which names a role needs or forbids (product.md §4). */
function applyRoleRules(record: Record<string, unknown>, validation: BodyValidation): void {
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

async function validateDonor(
  ctx: CommandContext,
  body: JsonObject,
  existing: DonorRow | null,
): Promise<DonorFields> {
  const validation = validateBody(donorShape, body, donorReadOnly);
  const record: Record<string, unknown> = { ...(existing ?? donorDefaults), ...validation.values };
  requireFields(record, ['role'], validation);
  applyRoleRules(record, validation);

  const valid = (name: string) =>
    validation.sent.has(name) && !validation.invalid.has(name) && record[name] !== null;
  if (valid('email')) {
    const taken = await isTaken(ctx, 'donors.email', String(record.email), existing?.id ?? null);
    if (taken) validation.errors.push(alreadyInUse('email', 'donor'));
  }
  if (valid('assigned_user_id')) {
    const problem = await checkReference(
      ctx,
      'users',
      Number(record.assigned_user_id),
      'assigned_user_id',
    );
    if (problem) validation.errors.push(problem);
  }

  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as DonorFields;
}

const emailOmitted = (body: JsonObject) =>
  body.email === undefined ||
  body.email === null ||
  (typeof body.email === 'string' && body.email.trim() === '');

const fieldConstraints = {
  donors_institution_email_key: alreadyInUse('email', 'donor'),
  donors_assigned_user_fkey: {
    param: 'assigned_user_id',
    code: 'reference_not_found',
    message: 'does not name an existing user',
  } satisfies FieldError,
};

const donorsResource: WritableResource<DonorRow, DonorFields> = {
  name: 'donors',
  label: 'donor',
  path: '/api/v1/donors',
  constraints: fieldConstraints,
  validate: validateDonor,
  find: findDonor,
  insert: insertDonor,
  update: updateDonor,
  present: presentDonor,
};

export const createDonor = createCommand(donorsResource, {
  requiresIdempotencyKey: (request) => emailOmitted(request.body),
});
export const updateDonorCommand = updateCommand(donorsResource);

export const deleteDonorCommand: Command = {
  name: 'donors.delete',
  constraints: { gifts_donor_fkey: inUse },
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, donorsResource);
    if (await donorHasGifts(ctx.db, ctx.institution.id, existing.id)) throw inUse();
    if (!ctx.dryRun) await deleteDonor(ctx.db, ctx.institution.id, existing.id);
    return deleted('donor', existing.id);
  },
};
