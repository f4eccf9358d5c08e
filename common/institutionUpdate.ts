import { z } from 'zod';
import { sql } from 'slonik';
import { lockClause, type Command, type CommandContext } from './commands/command.js';
import { errors } from './errors.js';
import type { EventType } from './events/eventType.js';
import {
  consentModes,
  findInstitution,
  holdsMoney,
  institutionResponse,
  presentInstitution,
  updateInstitution,
  type InstitutionSettings,
} from './institutions.js';
import { readOnlyOf } from './resources/responseFields.js';
import { currencyCode, oneOf } from './validation/fields.js';
import { validateBody, type Shape } from './validation/validateBody.js';

/** fundraising.md §1: any value but a whole number from 1 to 12 is out of range. */
const month = z
  .number({ message: 'must be a whole number from 1 to 12' })
  .refine((value) => Number.isInteger(value) && value >= 1 && value <= 12, {
    message: 'must be a whole number from 1 to 12',
    params: { code: 'out_of_range' },
  });

/** The institution's settings a tenant may change; every one is optional in a PATCH. */
export const institutionShape: Shape = {
  currency: { schema: currencyCode },
  fiscal_year_start_month: { schema: month },
  consent_mode: { schema: oneOf(consentModes) },
};

const readOnly = readOnlyOf(institutionResponse, institutionShape);

/** What the OpenAPI document says of the body, beyond the fields' own schemas. */
export const institutionUpdateText = {
  notes: {
    currency:
      'The base currency. It can change only while the institution has no gift, pledge, recurring gift or exchange rate (409 `resource_in_use`; a rate is stated in units of the base currency); sending the current one is always accepted.',
    fiscal_year_start_month: 'A whole number from 1 to 12 (else 422 `out_of_range`). Default `1`.',
    consent_mode: 'Default `opt_out`.',
  } as Record<string, string>,
  example: { fiscal_year_start_month: 7, consent_mode: 'opt_in' },
};

/** The row lock of a real write that changes no key: concurrent inserts referencing it go on. */
const noKeyLock = (ctx: CommandContext) =>
  ctx.dryRun ? sql.fragment`` : sql.fragment`FOR NO KEY UPDATE`;

/**
 * PATCH /institution: the settings of the caller's institution (and no other: the key's), any
 * subset of them. A write that sends `currency` holds the institution's row FOR UPDATE from
 * before its check of the money records to its commit. Every insert of a gift, pledge or
 * recurring gift takes the same row FOR KEY SHARE (its foreign key to institutions), which
 * conflicts with FOR UPDATE: one that holds it first commits before the check runs (after the
 * lock is granted, under a fresh snapshot) and is seen; one that comes later waits for the new
 * currency to commit. (Every other insert of the institution waits too, for that moment.)
 */
export const updateInstitutionCommand: Command = {
  name: 'institution.update',
  async execute(ctx, request) {
    const validation = validateBody(institutionShape, request.body, readOnly);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    // Only a change of currency needs the lock that waits for every insert of the institution.
    const lock = validation.sent.has('currency') ? lockClause(ctx) : noKeyLock(ctx);
    const existing = await findInstitution(ctx.db, ctx.institution.id, lock);
    // The API key was just confirmed, and institutions are never deleted.
    if (!existing) throw errors.invalidApiKey();
    const settings = {
      currency: existing.currency,
      fiscal_year_start_month: existing.fiscal_year_start_month,
      consent_mode: existing.consent_mode,
      ...validation.values,
    } as InstitutionSettings;
    if (settings.currency !== existing.currency && (await holdsMoney(ctx.db, ctx.institution.id)))
      throw errors.resourceInUse(
        `The institution has gifts, pledges, recurring gifts or exchange rates, so its currency stays ${existing.currency}.`,
      );
    const row = ctx.dryRun
      ? { ...existing, ...settings }
      : await updateInstitution(ctx.db, ctx.institution.id, settings);
    return {
      status: 200,
      body: presentInstitution(row),
      previous: presentInstitution(existing),
    };
  },
};

/** integration.md §1: the institution's one write is `institution.updated`. */
export const institutionEventTypes: readonly EventType[] = [
  {
    type: 'institution.updated',
    objectType: 'institution',
    command: updateInstitutionCommand.name,
    request: { method: 'PATCH', path: '/api/v1/institution', label: 'institution' },
  },
];
