import { sql } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../../commands/command.js';
import type { RecordCheck } from '../../commands/resourceCommands.js';
import { email, oneOf, recordId, text } from '../../validation/fields.js';
import { checkReference } from '../checks.js';
import { presentAddress } from '../donors/present.js';
import { addressResponse } from '../donors/response.js';
import { addressSchema, donorReference } from '../donors/schema.js';
import { calendarDay, reference } from '../responseFields.js';

/** A gift given in someone's honour or memory (fundraising.md §4). */
export const tributeTypes = ['in_honor_of', 'in_memory_of'] as const;
export const tributeAcknowledgements = ['pending', 'sent', 'not_required'] as const;
export type TributeAcknowledgement = (typeof tributeAcknowledgements)[number];

/** Blank text is no text: a name that trims to nothing is reported as `required`. */
const name = (max: number) => text(max).pipe(z.string().min(1, { message: 'is required' }));

const notifyInput = z.strictObject(
  {
    name: name(200),
    email: email.nullable().optional(),
    address: addressSchema.nullable().optional(),
  },
  { message: 'must be an object' },
);

export const tributeInput = z.strictObject(
  {
    type: oneOf(tributeTypes),
    honoree_name: name(200),
    honoree_donor_id: recordId.nullable().optional(),
    notify: notifyInput.nullable().optional(),
    message: text(1000).nullable().optional(),
  },
  { message: 'must be an object' },
);
export type TributeInput = z.infer<typeof tributeInput>;

/**
 * The tribute as the gifts table reads it (`readAs` below): what the client wrote, with the
 * honoree donor from its own column, where a deleted donor has left null.
 */
export const storedTribute = z.object({
  type: z.enum(tributeTypes),
  honoree_name: z.string(),
  honoree_donor_id: z.number().nullable().optional(),
  notify: z
    .object({
      name: z.string(),
      email: z.string().nullable(),
      address: addressSchema.nullable(),
    })
    .nullable(),
  message: z.string().nullable(),
});

export const tributeRow = {
  tribute: storedTribute.nullable(),
  tribute_honoree_donor_id: z.number().nullable(),
  tribute_acknowledgement: z.enum(tributeAcknowledgements).nullable(),
  tribute_sent_on: z.string().nullable(),
};

export interface TributeFields {
  tribute: Omit<z.infer<typeof storedTribute>, 'honoree_donor_id'> | null;
  tribute_honoree_donor_id: number | null;
  tribute_acknowledgement: TributeAcknowledgement | null;
  tribute_sent_on: string | null;
}

/** Casts, because the single-statement insert (INSERT … SELECT) gives its values no type. */
export const tributeReadAs = {
  tribute: sql.fragment`tribute || jsonb_build_object('honoree_donor_id', tribute_honoree_donor_id)`,
  tribute_sent_on: sql.fragment`tribute_sent_on::text`,
};
export const tributeWriteAs = {
  tribute: (tribute: TributeFields['tribute']) =>
    tribute === null ? sql.fragment`NULL::jsonb` : sql.fragment`${JSON.stringify(tribute)}::jsonb`,
  tribute_honoree_donor_id: (id: number | null) => sql.fragment`${id}::bigint`,
  tribute_acknowledgement: (state: TributeAcknowledgement | null) => sql.fragment`${state}::text`,
  tribute_sent_on: (date: string | null) => sql.fragment`${date}::date`,
};

/**
 * The stored tribute of a judged gift. The acknowledgement follows `notify` until it is sent: a
 * sent one stays sent with its date whatever the tribute becomes, short of its removal (the card
 * went out; the record of it does not depend on later edits), and removing the tribute removes
 * its acknowledgement with it.
 */
export function storeTribute(
  tribute: TributeInput | null | undefined,
  existing: TributeFields | null,
): TributeFields {
  if (!tribute)
    return {
      tribute: null,
      tribute_honoree_donor_id: null,
      tribute_acknowledgement: null,
      tribute_sent_on: null,
    };
  const sent = existing?.tribute_acknowledgement === 'sent';
  return {
    tribute: {
      type: tribute.type,
      honoree_name: tribute.honoree_name,
      notify: tribute.notify
        ? {
            name: tribute.notify.name,
            email: tribute.notify.email ?? null,
            address: tribute.notify.address ?? null,
          }
        : null,
      message: tribute.message ?? null,
    },
    tribute_honoree_donor_id: tribute.honoree_donor_id ?? null,
    tribute_acknowledgement: sent ? 'sent' : tribute.notify ? 'pending' : 'not_required',
    tribute_sent_on: sent ? existing.tribute_sent_on : null,
  };
}

/**
 * A notification goes to someone by email or by post: `notify` needs one of them, and a postal
 * address needs its first line. The honoree donor, when newly named, must be a donor of the
 * institution (a deceased one included: a gift in memory of a donor is the usual case).
 */
export async function checkTribute(
  ctx: CommandContext,
  check: RecordCheck<TributeFields>,
): Promise<void> {
  const honoree = tributeRulesWithoutLookup(check);
  if (honoree === null) return;
  const found = await checkReference(ctx, donorReference, honoree, 'tribute.honoree_donor_id');
  if (found) check.validation.errors.push(found);
}

/**
 * The tribute's rules that need no lookup (checkTribute's others); answers the honoree donor
 * to look up, when the tribute newly names one.
 */
export function tributeRulesWithoutLookup(check: RecordCheck<TributeFields>): number | null {
  const { validation, existing } = check;
  if (!validation.sent.has('tribute') || !check.valid('tribute')) return null;
  const tribute = check.record.tribute as TributeInput;
  const notify = tribute.notify;
  if (notify) {
    if (!notify.email && !notify.address)
      validation.errors.push({
        param: 'tribute.notify',
        code: 'required',
        message: 'needs an email or an address',
      });
    if (notify.address && !notify.address.line1)
      validation.errors.push({
        param: 'tribute.notify.address.line1',
        code: 'required',
        message: 'is required in an address to send to',
      });
  }
  const honoree = tribute.honoree_donor_id;
  return honoree && honoree !== existing?.tribute_honoree_donor_id ? honoree : null;
}

const notifyResponse = z.object({
  name: z.string(),
  email: z.string().nullable(),
  address: addressResponse.nullable(),
});

export const tributeResponse = z
  .object({
    type: z.enum(tributeTypes),
    honoree_name: z.string(),
    honoree_donor_id: reference('honoured donor')
      .nullable()
      .describe('The honoree when they are a donor of the institution; else null.'),
    notify: notifyResponse
      .nullable()
      .describe('Who is told of the gift (the family); null when nobody is.'),
    message: z.string().nullable(),
    acknowledgement: z
      .enum(tributeAcknowledgements)
      .describe(
        'Read-only. `pending` while `notify` awaits its acknowledgement, `not_required` without `notify`, `sent` once `POST /gifts/{id}/tribute-acknowledgement` recorded it.',
      ),
    sent_on: calendarDay
      .nullable()
      .describe('Read-only. When the acknowledgement was sent; null until then.'),
  })
  .nullable()
  .describe('The person the gift honours or remembers; null for a gift without a tribute.');
export type TributeResponse = z.infer<typeof tributeResponse>;

export function presentTribute(row: TributeFields): TributeResponse {
  const tribute = row.tribute;
  if (!tribute) return null;
  return {
    type: tribute.type,
    honoree_name: tribute.honoree_name,
    honoree_donor_id: row.tribute_honoree_donor_id,
    notify: tribute.notify
      ? {
          name: tribute.notify.name,
          email: tribute.notify.email ?? null,
          address: presentAddress(tribute.notify.address ?? null),
        }
      : null,
    message: tribute.message,
    acknowledgement: row.tribute_acknowledgement!,
    sent_on: row.tribute_sent_on,
  };
}
