import {
  previewCreated,
  type Command,
  type CommandContext,
  type WriteRequest,
} from '../../commands/command.js';
import { apiPath, findTarget } from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { donorIdentity, donorTable, type DonorRow } from '../donors/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { insertRow } from '../table.js';
import { presentConsent } from './present.js';
import { consentResponse } from './response.js';
import {
  CAPTURED_AT_LEEWAY_MS,
  consentDefaults,
  consentShape,
  consentsSegment,
  consentTable,
  type ConsentFields,
} from './schema.js';

const readOnly = readOnlyOf(consentResponse, consentShape);

/**
 * Every rule of a consent of this donor; 422 with every problem found. `now` is the time of the
 * request by the system clock: a consent records a real moment, so CLOCK_TODAY has no say.
 */
function judgeConsent(donor: DonorRow, body: JsonObject, now: string): ConsentFields {
  const validation = validateBody(consentShape, body, readOnly);
  const record: Record<string, unknown> = {
    ...consentDefaults,
    captured_at: now,
    ...validation.values,
  };
  requireFields(record, ['channel', 'response', 'source'], validation);
  // What the donor agreed to must be on record: an opt-in without its wording proves nothing.
  if (record.response === 'opt_in' && !validation.invalid.has('statement'))
    requireFields(record, ['statement'], validation);
  const capturedAt = record.captured_at;
  if (
    !validation.invalid.has('captured_at') &&
    typeof capturedAt === 'string' &&
    Date.parse(capturedAt) > Date.parse(now) + CAPTURED_AT_LEEWAY_MS
  )
    validation.errors.push({
      param: 'captured_at',
      code: 'out_of_range',
      message: 'must not be more than 5 minutes after the time of the request',
    });
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return {
    donor_id: donor.id,
    channel: record.channel as ConsentFields['channel'],
    purpose: record.purpose as string | null,
    response: record.response as ConsentFields['response'],
    source: record.source as string,
    statement: record.statement as string | null,
    captured_at: record.captured_at as string,
  };
}

/**
 * The donor, locked for the real write: a consent and the donor's delete or merge take turns. A
 * merged donor's consents live on its survivor (constituents.md §5), an erased one takes no more
 * (§6): 409 `donor_merged`.
 */
async function findDonor(ctx: CommandContext, request: WriteRequest): Promise<DonorRow> {
  const donor = await findTarget(ctx, request, { table: donorTable, identity: donorIdentity });
  const tombstone = errors.donorTombstone(donor);
  if (tombstone) throw tombstone;
  return donor;
}

/** POST /donors/{id}/consents (constituents.md §4). */
export const createConsent: Command = {
  name: 'consents.create',
  async execute(ctx, request) {
    const donor = await findDonor(ctx, request);
    const fields = judgeConsent(donor, request.body, ctx.now);
    if (ctx.dryRun) return { status: 201, body: presentConsent(previewCreated(ctx, fields)) };
    const row = await insertRow(ctx.db, consentTable, ctx.institution.id, fields);
    return {
      status: 201,
      body: presentConsent(row),
      location: `${apiPath(donorIdentity)}/${donor.id}/${consentsSegment}/${row.id}`,
    };
  },
};
