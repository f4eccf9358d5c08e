import { sql } from 'slonik';
import { enumFilter, idFilter } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentAward } from './present.js';
import { awardIdentity, awardStatuses, awardTable } from './schema.js';

export const awardList = collectionList(awardIdentity, awardTable, {
  present: presentAward,
  filters: {
    award_cycle_id: idFilter(sql.fragment`award_cycle_id`),
    scholarship_id: idFilter(sql.fragment`scholarship_id`),
    student_id: idFilter(sql.fragment`student_id`),
    status: enumFilter(sql.fragment`status`, awardStatuses),
  },
});
