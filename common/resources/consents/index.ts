import { sql } from 'slonik';
import type { ChildCollectionDescriptor } from '../descriptor.js';
import { findRow } from '../table.js';
import { createConsent } from './commands.js';
import { consentList } from './list.js';
import { presentConsent } from './present.js';
import { consentResponse } from './response.js';
import { consentDefaults, consentShape, consentsSegment, consentTable } from './schema.js';

/** A donor's consent ledger: GET and POST /donors/{id}/consents, GET /donors/{id}/consents/{consent_id}. */
export const consents: ChildCollectionDescriptor = {
  name: consentsSegment,
  param: 'consent_id',
  object: 'consent',
  label: 'consent',
  parent: { table: 'donors', label: 'donor' },
  create: createConsent,
  shape: consentShape,
  defaults: consentDefaults,
  response: consentResponse,
  list: consentList,
  ofParent: (donorId) => sql.fragment`donor_id = ${donorId}`,
  async retrieve(db, institutionId, donorId, id) {
    const row = await findRow(db, consentTable, institutionId, id);
    return row?.donor_id === donorId ? presentConsent(row) : null;
  },
  text: {
    component: 'Consent',
    rules: [
      'Records what a donor allowed or refused on one channel, for one purpose or (`purpose` null) for the whole channel. The ledger is append-only: a consent is never changed or deleted (PATCH, PUT and DELETE are 405); a new answer is a new record, and the latest one counts.',
      '`source` (where the answer came from: a form, a call, a reply card) is required. `statement` (the wording the donor agreed to) is required for an `opt_in` (422 `required`).',
      '`captured_at` is when the donor answered; omitted, it is the time of the request by the system clock (not `CLOCK_TODAY`). An answer captured earlier may be recorded later; one more than 5 minutes after the time of the request is 422 `out_of_range`.',
      'The list is newest `captured_at` first (when the donor answered, so a consent captured earlier and recorded later takes its place among the older ones); consents captured at the same moment, the one recorded last first. A donor of another institution is as absent as a missing one (404). Deleting a donor deletes its consents in the same transaction.',
    ].join('\n\n'),
    notes: {
      channel: 'The channel the answer is about.',
      purpose:
        'What the answer is about (`newsletter`, `appeals`); null for the whole channel. At most 60 characters.',
      response: '`opt_in` or `opt_out`.',
      source: 'Where the answer came from; at most 100 characters.',
      statement: 'The wording the donor agreed to; at most 2000 characters. Required for `opt_in`.',
      captured_at:
        'An ISO 8601 timestamp with its time zone. Defaults to the time of the request; at most 5 minutes after it.',
    },
    conflicts: ['donor_merged'],
    filterNotes: {},
    example: {
      channel: 'email',
      purpose: 'newsletter',
      response: 'opt_in',
      source: 'Website signup form',
      statement: 'Yes, send me the monthly newsletter by email.',
    },
  },
};
