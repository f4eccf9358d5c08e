import { sql } from 'slonik';
import { enumFilter, idFilter, type FilterSpec } from '../../pagination/listSpec.js';
import { parseFiscalYear } from '../../reports/fiscalYear.js';
import { collectionList } from '../table.js';
import { presentGivingStatement } from './present.js';
import { givingStatementIdentity, givingStatementTable, statementStatuses } from './schema.js';

const yearFilter: FilterSpec = {
  description: { kind: 'pattern', pattern: '^\\d{4}$', example: '2026' },
  parse: parseFiscalYear,
  condition: (value) => sql.fragment`year = ${Number(value)}`,
};

export const givingStatementList = collectionList(givingStatementIdentity, givingStatementTable, {
  present: presentGivingStatement,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    year: yearFilter,
    status: enumFilter(sql.fragment`status`, statementStatuses),
  },
});
