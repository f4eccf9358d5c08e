import { voidShape } from '../../commands/voidCommand.js';
import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { issueReceiptCommand, voidReceiptCommand } from './commands.js';
import { receiptDocument } from './document.js';
import { receiptList } from './list.js';
import { presentReceipt } from './present.js';
import { receiptResponse } from './response.js';
import { receiptDefaults, receiptIdentity, receiptShape, receiptTable } from './schema.js';

export const receipts: ResourceDescriptor = {
  ...receiptIdentity,
  permission: 'gifts',
  shape: receiptShape,
  defaults: receiptDefaults,
  response: receiptResponse,
  // A receipt is a legal document: never edited or deleted, only voided.
  commands: { create: issueReceiptCommand },
  createdAs: 'issued',
  list: receiptList,
  retrieve: retrieveFrom(receiptTable, presentReceipt),
  document: receiptDocument,
  actions: [
    {
      name: 'void',
      happened: 'voided',
      command: voidReceiptCommand,
      shape: voidShape,
      defaults: {},
      text: {
        component: 'ReceiptVoid',
        summary: 'Void a receipt',
        description: [
          'Withdraws an issued receipt: `status` becomes `void`, with `void_reason` and `voided_at`. Nothing else of it changes, and its `number` stays used: no other receipt ever gets it.',
          'The gift may then be receipted again (`POST /receipts`), and the new receipt gets the next number. A void receipt cannot be issued again or voided a second time (409 `invalid_state_transition`).',
        ].join('\n\n'),
        notes: { reason: 'Why the receipt is withdrawn; kept on the receipt as `void_reason`.' },
        conflicts: ['invalid_state_transition'],
        example: { reason: 'Issued with the wrong address; reissued.' },
      },
    },
  ],
  text: {
    tag: 'Receipts',
    component: 'Receipt',
    notes: {
      gift_id:
        'A gift of the institution that is not voided, not refunded in full, and has no issued receipt.',
      issued_on:
        'The date the receipt states. Default: today (UTC, or the day `CLOCK_TODAY` pins). Not before the gift’s `gift_date`.',
    },
    rules: [
      'Tax receipts for gifts. A receipt is a legal document: it is never changed or deleted, only voided (`POST /receipts/{id}/void`).',
      'Numbering: `number` counts each institution’s receipts 1, 2, 3, … in the order they are issued, with no gap and no number used twice, whatever runs concurrently or fails. It is taken inside the issue’s own transaction after every check has passed, so an issue that is refused, fails or is rolled back takes no number. A voided receipt keeps its number. A dry run answers `number` 0 and `id` 0: the number depends on the issues that commit before the real call.',
      'Frozen at issue: `amount` is the gift’s `net_amount`, `benefit_amount` the gift’s `benefit_amount`, and `deductible_amount` is `amount - benefit_amount`, or 0 when refunds left the gift less than the benefit (the benefit is still stated as received). `donor_name` and `donor_address` are the donor’s `display_name` and `address`. They are copied when the receipt is issued and never change afterwards, whatever later happens to the gift or the donor. While a gift has an issued receipt, its money cannot change (a PATCH of it is 409 `gift_locked`).',
      '`gift_id` must name a gift of the institution (422 `reference_not_found`) that is not voided and not refunded in full (`invalid_value`) and has no issued receipt (`already_in_use`; void that receipt first, and the gift can be receipted again, under a new number). `issued_on` must be a real date not before the gift’s `gift_date` (`out_of_range`).',
    ].join('\n\n'),
    filterNotes: {
      status: '`issued` or `void`.',
      issued_from: 'Receipts issued on or after this date.',
      issued_to: 'Receipts issued on or before this date.',
    },
    examples: { create: { gift_id: 1 } },
  },
};
