import { sql } from 'slonik';
import { textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentStudent } from './present.js';
import { studentIdentity, studentTable } from './schema.js';

export const studentList = collectionList(studentIdentity, studentTable, {
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
});
