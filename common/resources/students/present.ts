import type { StudentResponse } from './response.js';
import type { StudentRow } from './schema.js';

export const presentStudent = (row: StudentRow): StudentResponse => ({
  id: row.id,
  object: 'student',
  student_number: row.student_number,
  first_name: row.first_name,
  last_name: row.last_name,
  email: row.email,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
