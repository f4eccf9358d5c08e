import { sql } from 'slonik';
import { enumFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentFund } from './present.js';
import { fundIdentity, fundRestrictions, fundStatuses, fundTable } from './schema.js';

export const fundList = collectionList(fundIdentity, fundTable, {
  present: (row) => presentFund(row),
  filters: {
    q: textSearch([sql.fragment`name`, sql.fragment`code`]),
    status: enumFilter(sql.fragment`status`, fundStatuses),
    restriction: enumFilter(sql.fragment`restriction`, fundRestrictions),
  },
});
