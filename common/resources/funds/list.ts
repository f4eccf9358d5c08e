import { sql } from 'slonik';
import { enumFilter, textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentFund } from './present.js';
import { columns } from './queries.js';
import { fundRestrictions, fundRow, fundStatuses, type FundRow } from './schema.js';

export const fundList: ListSpec<FundRow> = {
  endpoint: '/api/v1/funds',
  from: sql.fragment`funds`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns,
  row: fundRow,
  keyOf: (row) => row.id,
  present: (row) => presentFund(row),
  filters: {
    q: textSearch([sql.fragment`name`, sql.fragment`code`]),
    status: enumFilter(sql.fragment`status`, fundStatuses),
    restriction: enumFilter(sql.fragment`restriction`, fundRestrictions),
  },
};
