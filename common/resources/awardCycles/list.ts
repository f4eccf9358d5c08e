import { sql } from 'slonik';
import { enumFilter, textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentAwardCycle } from './present.js';
import { awardCycleRow, awardCycleStatuses, type AwardCycleRow } from './schema.js';

export const awardCycleList: ListSpec<AwardCycleRow> = {
  endpoint: '/api/v1/award-cycles',
  from: sql.fragment`award_cycles`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`
    id, name, starts_on::text AS starts_on, ends_on::text AS ends_on, status, created_at,
    updated_at`,
  row: awardCycleRow,
  keyOf: (row) => row.id,
  present: presentAwardCycle,
  filters: {
    q: textSearch([sql.fragment`name`]),
    status: enumFilter(sql.fragment`status`, awardCycleStatuses),
  },
};
