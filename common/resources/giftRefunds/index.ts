import { sql } from 'slonik';
import type { ChildCollectionDescriptor } from '../descriptor.js';
import { createGiftRefund } from './commands.js';
import { giftRefundList } from './list.js';
import { giftRefundResponse } from './response.js';
import { findRow } from '../table.js';
import { presentGiftRefund } from './present.js';
import {
  giftRefundDefaults,
  giftRefundShape,
  giftRefundsSegment,
  giftRefundTable,
} from './schema.js';

/** A gift's refunds: GET and POST /gifts/{id}/refunds, GET /gifts/{id}/refunds/{refund_id}. */
export const giftRefunds: ChildCollectionDescriptor = {
  name: giftRefundsSegment,
  param: 'refund_id',
  object: 'gift_refund',
  parentHappened: 'refunded',
  label: 'refund',
  parent: { table: 'gifts', label: 'gift' },
  create: createGiftRefund,
  shape: giftRefundShape,
  defaults: giftRefundDefaults,
  response: giftRefundResponse,
  list: giftRefundList,
  ofParent: (giftId) => sql.fragment`gift_id = ${giftId}`,
  async retrieve(db, institutionId, giftId, id) {
    const row = await findRow(db, giftRefundTable, institutionId, id);
    return row?.gift_id === giftId ? presentGiftRefund(row) : null;
  },
  text: {
    component: 'GiftRefund',
    rules: [
      'Records money given back to the donor. A refund is never changed or deleted: it stays beside the gift, which keeps its `amount` and shows the refunds in `amount_refunded` and `net_amount`; fund totals and donor giving count the gift net of its refunds, and its soft credits count in proportion to what is left (`soft_credit_total`). A gift may be refunded several times, until nothing is left.',
      '`amount` is at most the gift’s `net_amount` (422 `out_of_range`), and `refund_date` is not before the gift’s `gift_date` (422 `out_of_range`).',
      '`designations` says what each fund gives back. It may be omitted for a gift with one designation (the refund comes from that fund, and the answer names it) and for an undesignated gift (`[]`); a gift with more than one designation needs it (422 `required`). Each part names one of the gift’s own funds (else 422 `invalid_value` at `designations.N.fund_id`; a fund of another institution is just another fund not on the gift), at most once (`already_in_use`), for at most what that fund still holds of the gift, its designation’s `amount - amount_refunded` (`out_of_range` at `designations.N.amount`); the parts sum to `amount` (422 `designation_total_mismatch` on `designations`).',
      'A voided gift cannot be refunded: 422 `invalid_value` at `gift_id` (the refunded gift, named by the path), as a receipt naming a voided gift is refused.',
      'In the same transaction the gift’s issued receipt, if any, is voided: it states an amount that is no longer the gift’s. The gift may be receipted again for what is left. The gift’s `updated_at` changes.',
      'Concurrent refunds of one gift take turns on the gift: together they never give back more than it holds.',
    ].join('\n\n'),
    notes: {
      amount: 'At most the gift’s `net_amount`.',
      refund_date: 'Not before the gift’s `gift_date`.',
      reason: 'Why the money went back; at most 500 characters.',
      designations:
        'Each fund of the gift once, each at most what that fund still holds of the gift, summing to `amount`. Required when the gift has more than one designation.',
    },
    conflicts: [],
    filterNotes: {},
    example: {
      amount: 5,
      refund_date: '2026-11-24',
      reason: 'Charged twice by the card processor',
    },
  },
};
