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
    // One text, so that one trigram index (migrations/1732500000000_scholarship-list-indexes.sql,
    // built on exactly this expression) serves it: the full name, so "Ada Love" finds Ada
    // Lovelace, then the student number and the email, joined by U+001F so that a search term
    // does not match across two fields.
    q: textSearch([
      sql.fragment`(first_name || ' ' || last_name || chr(31) || student_number || chr(31) || coalesce(email, ''))`,
    ]),
  },
};
