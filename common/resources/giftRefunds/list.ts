import { collectionList } from '../table.js';
import { presentGiftRefund } from './present.js';
import { giftRefundTable } from './schema.js';

/** One gift's refunds: the handler adds the gift to the endpoint and to the condition. */
export const giftRefundList = collectionList({ path: '/gifts/:id/refunds' }, giftRefundTable, {
  present: presentGiftRefund,
  filters: {},
});
