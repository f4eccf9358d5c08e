import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { studentRow, type StudentFields, type StudentRow } from './schema.js';

const columns = sql.fragment`
  id, student_number, first_name, last_name, email, created_at, updated_at`;

export function findStudent(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<StudentRow | null> {
  return db.maybeOne(sql.type(studentRow)`
    SELECT ${columns} FROM students WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export function insertStudent(
  db: CommonQueryMethods,
  institutionId: number,
  student: StudentFields,
): Promise<StudentRow> {
  return db.one(sql.type(studentRow)`
    INSERT INTO students (institution_id, student_number, first_name, last_name, email)
    VALUES (${institutionId}, ${student.student_number}, ${student.first_name}, ${student.last_name},
            ${student.email})
    RETURNING ${columns}`);
}

export function updateStudent(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  student: StudentFields,
): Promise<StudentRow> {
  return db.one(sql.type(studentRow)`
    UPDATE students SET student_number = ${student.student_number},
      first_name = ${student.first_name}, last_name = ${student.last_name},
      email = ${student.email}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}
