import { sql } from 'slonik';
import { enumFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentAwardCycle } from './present.js';
import { awardCycleIdentity, awardCycleStatuses, awardCycleTable } from './schema.js';

export const awardCycleList = collectionList(awardCycleIdentity, awardCycleTable, {
  present: presentAwardCycle,
  filters: {
    q: textSearch([sql.fragment`name`]),
    status: enumFilter(sql.fragment`status`, awardCycleStatuses),
  },
});
