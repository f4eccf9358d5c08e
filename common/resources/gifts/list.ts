import { sql } from 'slonik';
import { dateFilter, enumFilter, idFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentGift } from './present.js';
import { giftIdentity, giftTable, giftTypes } from './schema.js';

export const giftList = collectionList(giftIdentity, giftTable, {
  present: presentGift,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    fund_id: idFilter(sql.fragment`fund_id`),
    type: enumFilter(sql.fragment`type`, giftTypes),
    q: textSearch([sql.fragment`subject`]),
    gift_date_from: dateFilter(sql.fragment`gift_date`, '>='),
    gift_date_to: dateFilter(sql.fragment`gift_date`, '<='),
  },
});
