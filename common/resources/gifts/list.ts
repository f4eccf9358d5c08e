import { sql } from 'slonik';
import {
  dateFilter,
  enumFilter,
  idFilter,
  parseIdParameter,
  textSearch,
} from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentGift } from './present.js';
import { giftIdentity, giftStatuses, giftTable, giftTypes } from './schema.js';
import { tributeAcknowledgements } from './tribute.js';

/** An id within one of the gift's id arrays, served by its partial GIN index (hence `<> '{}'`). */
const containsId = (
  column: 'fund_ids' | 'soft_credit_donor_ids' | 'campaign_ids' | 'appeal_ids',
) => ({
  description: { kind: 'id' } as const,
  parse: parseIdParameter,
  condition: (value: string) =>
    sql.fragment`(${sql.identifier([column])} <> '{}'
      AND ${sql.identifier([column])} @> ARRAY[${Number(value)}::bigint])`,
});

export const giftList = collectionList(giftIdentity, giftTable, {
  present: presentGift,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    recurring_gift_id: idFilter(sql.fragment`recurring_gift_id`),
    fund_id: containsId('fund_ids'),
    soft_credit_donor_id: containsId('soft_credit_donor_ids'),
    campaign_id: containsId('campaign_ids'),
    appeal_id: containsId('appeal_ids'),
    matches_gift_id: idFilter(sql.fragment`matches_gift_id`),
    type: enumFilter(sql.fragment`type`, giftTypes),
    status: enumFilter(sql.fragment`status`, giftStatuses),
    tribute_acknowledgement: enumFilter(
      sql.fragment`tribute_acknowledgement`,
      tributeAcknowledgements,
    ),
    q: textSearch([sql.fragment`subject`]),
    gift_date_from: { ...dateFilter(sql.fragment`gift_date`, '>='), followsKey: true },
    gift_date_to: { ...dateFilter(sql.fragment`gift_date`, '<='), followsKey: true },
  },
});
