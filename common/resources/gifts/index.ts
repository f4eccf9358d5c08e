import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createGift, deleteGiftCommand, updateGiftCommand } from './commands.js';
import { giftList } from './list.js';
import { presentGift } from './present.js';
import { giftResponse } from './response.js';
import { giftDefaults, giftIdentity, giftShape, giftTable } from './schema.js';

export const gifts: ResourceDescriptor = {
  ...giftIdentity,
  shape: giftShape,
  defaults: giftDefaults,
  response: giftResponse,
  commands: { create: createGift, update: updateGiftCommand, delete: deleteGiftCommand },
  list: giftList,
  retrieve: retrieveFrom(giftTable, presentGift),
  text: {
    tag: 'Gifts',
    component: 'Gift',
    notes: {
      donor_id: 'A donor of the institution.',
      currency: 'Defaults to the institution’s currency.',
      check_number: 'Only when `type` is `check`.',
      fund_id: 'The designation: an active fund of the institution.',
    },
    rules: [
      '`donor_id` must name a donor of the institution and `fund_id` an active fund (422 `reference_not_found` / `reference_inactive`).',
      '`check_number` is allowed only when `type` is `check` (422 `not_allowed`).',
      '`currency` defaults to the institution’s currency.',
    ].join('\n\n'),
    filterNotes: {
      q: 'The subject contains this text.',
      gift_date_from: 'Gifts on or after this date.',
      gift_date_to: 'Gifts on or before this date.',
    },
    examples: {
      create: {
        donor_id: 1,
        amount: 250,
        subject: 'Annual fund 2026',
        gift_date: '2026-11-24',
        type: 'credit_card',
        fund_id: 1,
      },
      update: { subject: 'Annual fund 2026, in memory of a classmate' },
    },
  },
};
