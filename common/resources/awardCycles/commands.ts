import { pick, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse, isTaken } from '../checks.js';
import { presentAwardCycle } from './present.js';
import { findAwardCycle, insertAwardCycle, updateAwardCycle } from './queries.js';
import {
  awardCycleDefaults,
  awardCycleInitialStatuses,
  awardCycleReadOnly,
  awardCycleRequired,
  awardCycleShape,
  awardCycleTransitions,
  type AwardCycleFields,
  type AwardCycleRow,
  type AwardCycleStatus,
} from './schema.js';

const fieldNames = ['name', 'starts_on', 'ends_on', 'status'] as const;
const constraints = { award_cycles_institution_name_key: alreadyInUse('name', 'award cycle') };

/** Every field rule for a cycle, on the merged record of a create or an update. */
async function validateAwardCycle(
  ctx: CommandContext,
  body: JsonObject,
  existing: AwardCycleRow | null,
): Promise<AwardCycleFields> {
  const validation = validateBody(awardCycleShape, body, awardCycleReadOnly);
  const record: Record<string, unknown> = {
    ...(existing ?? awardCycleDefaults),
    ...validation.values,
  };
  requireFields(record, awardCycleRequired, validation);
  const valid = (name: string) =>
    !validation.invalid.has(name) && record[name] !== undefined && record[name] !== null;

  // A status change the machine does not allow is a 409 before any field is judged: no fix to
  // the other fields could make it succeed.
  const status = record.status as AwardCycleStatus;
  if (
    existing &&
    valid('status') &&
    status !== existing.status &&
    !awardCycleTransitions[existing.status].includes(status)
  ) {
    throw errors.invalidStateTransition(
      'status',
      `An award cycle cannot go from ${existing.status} to ${status}.`,
    );
  }
  if (!existing && valid('status') && !awardCycleInitialStatuses.includes(status)) {
    validation.errors.push({
      param: 'status',
      code: 'invalid_value',
      message: 'a new award cycle starts as draft or open',
    });
  }
  // YYYY-MM-DD strings compare like the dates they name.
  if (valid('starts_on') && valid('ends_on') && String(record.ends_on) < String(record.starts_on)) {
    validation.errors.push({
      param: 'ends_on',
      code: 'out_of_range',
      message: 'must be on or after starts_on',
    });
  }
  if (validation.sent.has('name') && valid('name')) {
    const taken = await isTaken(
      ctx,
      'award_cycles.name',
      String(record.name),
      existing?.id ?? null,
    );
    if (taken) validation.errors.push(alreadyInUse('name', 'award cycle'));
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as AwardCycleFields;
}

/**
 * An archived cycle takes no change at all, not even an empty one: 409 `resource_archived`
 * before anything else. Then a status change the machine does not allow is 409
 * `invalid_state_transition`, and only then are the fields judged (422).
 */
async function refuseArchived(ctx: CommandContext, existing: AwardCycleRow): Promise<void> {
  if (existing.status === 'archived') {
    throw errors.resourceArchived('This award cycle is archived and takes no changes.');
  }
}

const awardCyclesResource: WritableResource<AwardCycleRow, AwardCycleFields> = {
  name: 'award_cycles',
  label: 'award cycle',
  path: '/api/v1/award-cycles',
  constraints,
  validate: validateAwardCycle,
  find: findAwardCycle,
  insert: insertAwardCycle,
  update: updateAwardCycle,
  present: presentAwardCycle,
  guard: refuseArchived,
};

export const createAwardCycle = createCommand(awardCyclesResource);
export const updateAwardCycleCommand = updateCommand(awardCyclesResource);
