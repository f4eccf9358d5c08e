import { sql } from 'slonik';
import { enumFilter, idFilter, type ListSpec } from '../../pagination/listSpec.js';
import { presentAward } from './present.js';
import { awardRow, awardStatuses, type AwardRow } from './schema.js';

export const awardList: ListSpec<AwardRow> = {
  endpoint: '/api/v1/awards',
  from: sql.fragment`awards`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`
    id, award_cycle_id, scholarship_id, student_id, amount, status, created_at, updated_at`,
  row: awardRow,
  keyOf: (row) => row.id,
  present: presentAward,
  filters: {
    award_cycle_id: idFilter(sql.fragment`award_cycle_id`),
    scholarship_id: idFilter(sql.fragment`scholarship_id`),
    student_id: idFilter(sql.fragment`student_id`),
    status: enumFilter(sql.fragment`status`, awardStatuses),
  },
};
