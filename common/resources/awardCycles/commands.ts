import type { CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { alreadyInUse, checkUnique } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentAwardCycle } from './present.js';
import { awardCycleResponse } from './response.js';
import {
  awardCycleDefaults,
  awardCycleIdentity,
  awardCycleInitialStatuses,
  awardCycleShape,
  awardCycleTable,
  awardCycleTransitions,
  type AwardCycleFields,
  type AwardCycleRow,
  type AwardCycleStatus,
} from './schema.js';

/** The rules across fields of a cycle, on the merged record of a create or an update. */
async function awardCycleRules(
  ctx: CommandContext,
  check: RecordCheck<AwardCycleRow>,
): Promise<void> {
  const { record, validation, existing, valid } = check;
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
  await checkUnique(ctx, check, {
    table: 'award_cycles',
    column: 'name',
    ignoreCase: true,
    what: 'award cycle',
  });
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
  identity: awardCycleIdentity,
  table: awardCycleTable,
  shape: awardCycleShape,
  defaults: awardCycleDefaults,
  readOnly: readOnlyOf(awardCycleResponse, awardCycleShape),
  constraints: { award_cycles_institution_name_key: alreadyInUse('name', 'award cycle') },
  rules: awardCycleRules,
  present: presentAwardCycle,
  guard: refuseArchived,
};

export const createAwardCycle = createCommand(awardCyclesResource);
export const updateAwardCycleCommand = updateCommand(awardCyclesResource);
