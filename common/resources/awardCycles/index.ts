import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createAwardCycle, updateAwardCycleCommand } from './commands.js';
import { awardCycleList } from './list.js';
import { presentAwardCycle } from './present.js';
import { awardCycleResponse } from './response.js';
import {
  awardCycleDefaults,
  awardCycleIdentity,
  awardCycleShape,
  awardCycleTable,
} from './schema.js';

export const awardCycles: ResourceDescriptor = {
  ...awardCycleIdentity,
  permission: 'scholarships',
  shape: awardCycleShape,
  defaults: awardCycleDefaults,
  response: awardCycleResponse,
  updatedAs: { field: 'status', happened: 'status_changed' },
  commands: { create: createAwardCycle, update: updateAwardCycleCommand },
  list: awardCycleList,
  retrieve: retrieveFrom(awardCycleTable, presentAwardCycle),
  text: {
    tag: 'Award cycles',
    component: 'AwardCycle',
    notes: {
      name: 'Unique per institution (422 `already_in_use`).',
      ends_on: 'On or after `starts_on` (422 `out_of_range`).',
      status: 'A create may start as `draft` or `open`; see the state machine above.',
    },
    rules: [
      'States: `draft` (the default; a create may also say `open`) → `open` → `closed` → `archived`; also `closed` → `open` (reopen) and `draft` → `archived` (discard). Any other change of `status` is 409 `invalid_state_transition`.',
      'An archived cycle takes no change at all: 409 `resource_archived`.',
      '`ends_on` must be on or after `starts_on`; `name` is unique per institution.',
    ].join('\n\n'),
    conflicts: { update: ['invalid_state_transition', 'resource_archived'] },
    filterNotes: { q: 'The name contains this text.' },
    examples: {
      create: { name: '2027–28 awards', starts_on: '2027-01-15', ends_on: '2027-06-30' },
      update: { name: '2027–28 awards (extended)' },
    },
  },
};
