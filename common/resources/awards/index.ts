import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createAward, updateAwardCommand } from './commands.js';
import { awardList } from './list.js';
import { presentAward } from './present.js';
import { awardResponse } from './response.js';
import { awardDefaults, awardIdentity, awardShape, awardTable } from './schema.js';

export const awards: ResourceDescriptor = {
  ...awardIdentity,
  permission: 'scholarships',
  shape: awardShape,
  defaults: awardDefaults,
  response: awardResponse,
  commands: { create: createAward, update: updateAwardCommand },
  list: awardList,
  retrieve: retrieveFrom(awardTable, presentAward),
  text: {
    tag: 'Awards',
    component: 'Award',
    notes: {
      award_cycle_id: 'A cycle in status `open` or `closed` (else 422 `invalid_value`).',
      scholarship_id: 'An active scholarship (else 422 `reference_inactive`).',
      student_id: 'A student of the institution.',
      amount: 'Drawn from the scholarship’s fund: see the fund limit rule above.',
      status: 'A create starts as `offered`; see the state machine above.',
    },
    rules: [
      'A student awarded a scholarship in a cycle. States: `offered` (the only one a create may send) → `accepted`, `declined` or `cancelled`; `accepted` → `disbursed` or `cancelled`. Any other change of `status` is 409 `invalid_state_transition`; an award of an archived cycle takes no change: 409 `resource_archived`.',
      'One live award (status not `declined` or `cancelled`) per cycle, scholarship and student: a second is 422 `already_in_use`.',
      'The live awards drawing from a fund never exceed its `award_limit`, also under concurrent writes: a create or amount increase that would is 422 `insufficient_fund_balance` on `amount`.',
    ].join('\n\n'),
    conflicts: { update: ['invalid_state_transition', 'resource_archived'] },
    filterNotes: {},
    examples: {
      create: { award_cycle_id: 1, scholarship_id: 1, student_id: 1, amount: 5000 },
      update: { amount: 4500 },
    },
  },
};
