import { sql } from 'slonik';
import { enumFilter, idFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentScholarship } from './present.js';
import { scholarshipIdentity, scholarshipStatuses, scholarshipTable } from './schema.js';

export const scholarshipList = collectionList(scholarshipIdentity, scholarshipTable, {
  present: presentScholarship,
  filters: {
    q: textSearch([sql.fragment`name`]),
    fund_id: idFilter(sql.fragment`fund_id`),
    status: enumFilter(sql.fragment`status`, scholarshipStatuses),
  },
});
