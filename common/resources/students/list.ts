import { sql } from 'slonik';
import { textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentStudent } from './present.js';
import { studentRow, type StudentRow } from './schema.js';

export const studentList: ListSpec<StudentRow> = {
  endpoint: '/api/v1/students',
  from: sql.fragment`students`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`
    id, student_number, first_name, last_name, email, created_at, updated_at`,
  row: studentRow,
  keyOf: (row) => row.id,
  present: presentStudent,
  filters: {
    // The full name, so "Ada Love" finds Ada Lovelace; the expression is the one the trigram
    // index of migrations/1732500000000_scholarship-list-indexes.sql is built on.
    q: textSearch([
      sql.fragment`first_name || ' ' || last_name`,
      sql.fragment`student_number`,
      sql.fragment`email`,
    ]),
  },
};
