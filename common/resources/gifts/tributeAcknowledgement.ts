import { sql, type CommonQueryMethods } from 'slonik';
import type { Command } from '../../commands/command.js';
import { findTarget } from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { calendarDate } from '../../validation/fields.js';
import { requireFields, validateBody, type Shape } from '../../validation/validateBody.js';
import type { ActionDescriptor } from '../descriptor.js';
import { findRow } from '../table.js';
import { presentGift } from './present.js';
import { giftIdentity, giftTable, type GiftRow } from './schema.js';

export const tributeAcknowledgementShape: Shape = {
  sent_on: { schema: calendarDate, required: true },
};

async function acknowledge(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  sentOn: string,
): Promise<GiftRow> {
  await db.query(sql.unsafe`
    UPDATE gifts SET tribute_acknowledgement = 'sent', tribute_sent_on = ${sentOn}::date,
      updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}`);
  return (await findRow(db, giftTable, institutionId, id))!;
}

/**
 * POST /gifts/{id}/tribute-acknowledgement (fundraising.md §4): pending → sent, once. The gift
 * is locked for the real write, so an acknowledgement takes turns with a PATCH of the tribute
 * and with another acknowledgement; the state is judged (409) before the body (422), as a void.
 * A voided gift may still be acknowledged: the family was told, whatever became of the money.
 */
export const acknowledgeTributeCommand: Command = {
  name: `${giftIdentity.name}.tribute-acknowledgement`,
  async execute(ctx, request) {
    const gift = await findTarget(ctx, request, { identity: giftIdentity, table: giftTable });
    const state = gift.tribute_acknowledgement;
    if (state !== 'pending')
      throw errors.invalidStateTransition(
        'tribute.acknowledgement',
        state === 'sent'
          ? `This gift’s tribute acknowledgement was already sent on ${gift.tribute_sent_on}.`
          : state === 'not_required'
            ? 'This gift’s tribute names nobody to notify, so there is no acknowledgement to send; give the tribute a `notify` first (PATCH /api/v1/gifts/{id}).'
            : 'This gift has no tribute, so there is no acknowledgement to send.',
      );
    const validation = validateBody(tributeAcknowledgementShape, request.body);
    requireFields(validation.values, ['sent_on'], validation);
    const sentOn = validation.values.sent_on as string | undefined;
    if (sentOn !== undefined && sentOn < gift.gift_date)
      validation.errors.push({
        param: 'sent_on',
        code: 'out_of_range',
        message: `must not be before the gift’s gift_date (${gift.gift_date})`,
      });
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const row: GiftRow = ctx.dryRun
      ? {
          ...gift,
          tribute_acknowledgement: 'sent',
          tribute_sent_on: sentOn!,
          updated_at: ctx.now,
        }
      : await acknowledge(ctx.db, ctx.institution.id, gift.id, sentOn!);
    return { status: 200, body: presentGift(row) };
  },
};

export const acknowledgeTributeAction: ActionDescriptor = {
  name: 'tribute-acknowledgement',
  happened: 'tribute_acknowledged',
  command: acknowledgeTributeCommand,
  shape: tributeAcknowledgementShape,
  defaults: {},
  text: {
    component: 'GiftTributeAcknowledgement',
    summary: 'Record a tribute acknowledgement',
    description: [
      'Records that the person named in the tribute’s `notify` was told of the gift: `tribute.acknowledgement` goes from `pending` to `sent`, and `tribute.sent_on` is set. The event is `gift.tribute_acknowledged`.',
      'Only a pending acknowledgement can be sent: a gift whose acknowledgement is already `sent`, is `not_required` (a tribute without `notify`), or that has no tribute, is 409 `invalid_state_transition`. A voided gift may still be acknowledged: the family was told whatever became of the money.',
      'Answers the gift as `GET /gifts/{id}` does.',
    ].join('\n\n'),
    notes: { sent_on: 'When the acknowledgement was sent: not before the gift’s `gift_date`.' },
    conflicts: ['invalid_state_transition'],
    example: { sent_on: '2026-11-24' },
  },
};
