import { sql } from 'slonik';
import { dateFilter, enumFilter, idFilter } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentReceipt } from './present.js';
import { receiptIdentity, receiptStatuses, receiptTable } from './schema.js';

export const receiptList = collectionList(receiptIdentity, receiptTable, {
  present: presentReceipt,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    gift_id: idFilter(sql.fragment`gift_id`),
    status: enumFilter(sql.fragment`status`, receiptStatuses),
    issued_from: dateFilter(sql.fragment`issued_on`, '>='),
    issued_to: dateFilter(sql.fragment`issued_on`, '<='),
  },
});
