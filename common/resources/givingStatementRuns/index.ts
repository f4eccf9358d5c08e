import type { EventType } from '../../events/eventType.js';
import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createGivingStatementRunCommand } from './commands.js';
import { runDocuments } from './documents.js';
import { presentGivingStatementRun } from './present.js';
import { givingStatementRunResponse } from './response.js';
import {
  givingStatementRunDefaults,
  givingStatementRunIdentity,
  givingStatementRunShape,
  givingStatementRunTable,
} from './schema.js';

/**
 * `giving_statement_run.completed`, which the workers emit when a run's last step commits (no
 * write of the queue carries it), as `import.completed` is.
 */
export const givingStatementRunEventTypes: readonly EventType[] = [
  {
    type: 'giving_statement_run.completed',
    objectType: 'giving_statement_run',
    command: 'giving_statement_runs.complete',
    request: {
      method: 'POST',
      path: `/api/v1${givingStatementRunIdentity.path}`,
      label: givingStatementRunIdentity.label,
    },
  },
];

export const givingStatementRuns: ResourceDescriptor = {
  ...givingStatementRunIdentity,
  permission: 'gifts',
  shape: givingStatementRunShape,
  defaults: givingStatementRunDefaults,
  response: givingStatementRunResponse,
  commands: { create: createGivingStatementRunCommand },
  createdAccepted: true,
  retrieve: retrieveFrom(givingStatementRunTable, presentGivingStatementRun),
  downloads: [runDocuments],
  text: {
    tag: 'Giving statement runs',
    component: 'GivingStatementRun',
    notes: {
      year: 'As for `POST /giving-statements`: the calendar or fiscal year, begun.',
      period: '`calendar` or `fiscal`.',
      min_total:
        'Donors whose counted giving in the period (base amounts net of refunds, as the reports count) is above this get a statement. Default 0: every donor with a counted gift.',
    },
    rules: [
      'Issues the year-end statements of every donor over `min_total` in the background (fundraising.md §6): answered 202 with the run `queued`; `GET /giving-statement-runs/{id}` shows it `running`, with `donors_done` advancing, then `completed`. Each statement is issued as `POST /giving-statements` would issue it (numbered, superseding the donor’s last one of the period, `run_id` naming the run) and emits `giving_statement.issued`; the run emits `giving_statement_run.completed` when done.',
      'A run goes donor after donor in id order, a few donors per transaction that commits their statements with the run’s progress: a worker killed mid-run leaves it where its last transaction did, and another goes on from there, so no donor gets two statements from one run, none is skipped, and numbers stay gap-free.',
      '`year` out of range or whose period has not begun is 422 `out_of_range`; `period` other than `calendar` or `fiscal` is `invalid_value`; `min_total` must be a money amount ≥ 0.',
    ].join('\n\n'),
    filterNotes: {},
    examples: { create: { year: 2026, period: 'calendar', min_total: 0 } },
  },
};
