import { sql } from 'slonik';
import { enumFilter, idFilter, textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentScholarship } from './present.js';
import { scholarshipRow, scholarshipStatuses, type ScholarshipRow } from './schema.js';

export const scholarshipList: ListSpec<ScholarshipRow> = {
  endpoint: '/api/v1/scholarships',
  from: sql.fragment`scholarships`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`id, name, fund_id, description, status, created_at, updated_at`,
  row: scholarshipRow,
  keyOf: (row) => row.id,
  present: presentScholarship,
  filters: {
    q: textSearch([sql.fragment`name`]),
    fund_id: idFilter(sql.fragment`fund_id`),
    status: enumFilter(sql.fragment`status`, scholarshipStatuses),
  },
};
