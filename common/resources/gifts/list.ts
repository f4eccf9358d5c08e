import { sql } from 'slonik';
import {
  dateFilter,
  enumFilter,
  idFilter,
  textSearch,
  type ListSpec,
} from '../../pagination/listSpec.js';
import { presentGift } from './present.js';
import { columns } from './queries.js';
import { giftRow, giftTypes, type GiftRow } from './schema.js';

export const giftList: ListSpec<GiftRow> = {
  endpoint: '/api/v1/gifts',
  from: sql.fragment`gifts`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns,
  row: giftRow,
  keyOf: (row) => row.id,
  present: presentGift,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    fund_id: idFilter(sql.fragment`fund_id`),
    type: enumFilter(sql.fragment`type`, giftTypes),
    q: textSearch([sql.fragment`subject`]),
    gift_date_from: dateFilter(sql.fragment`gift_date`, '>='),
    gift_date_to: dateFilter(sql.fragment`gift_date`, '<='),
  },
};
