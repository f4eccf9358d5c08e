import { pick, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { requireFields, validateBody } from '../../validation/validateBody.js';
import { alreadyInUse, isTaken } from '../checks.js';
import { presentStudent } from './present.js';
import { findStudent, insertStudent, updateStudent } from './queries.js';
import {
  studentDefaults,
  studentReadOnly,
  studentRequired,
  studentShape,
  type StudentFields,
  type StudentRow,
} from './schema.js';

const fieldNames = ['student_number', 'first_name', 'last_name', 'email'] as const;
const constraints = { students_institution_number_key: alreadyInUse('student_number', 'student') };

/** Every rule for a student, on the merged record of a create or an update. */
async function validateStudent(
  ctx: CommandContext,
  body: JsonObject,
  existing: StudentRow | null,
): Promise<StudentFields> {
  const validation = validateBody(studentShape, body, studentReadOnly);
  const record: Record<string, unknown> = {
    ...(existing ?? studentDefaults),
    ...validation.values,
  };
  requireFields(record, studentRequired, validation);
  const number = record.student_number;
  if (
    validation.sent.has('student_number') &&
    !validation.invalid.has('student_number') &&
    typeof number === 'string'
  ) {
    if (await isTaken(ctx, 'students.student_number', number, existing?.id ?? null)) {
      validation.errors.push(alreadyInUse('student_number', 'student'));
    }
  }
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return pick(record, fieldNames) as StudentFields;
}

const studentsResource: WritableResource<StudentRow, StudentFields> = {
  name: 'students',
  label: 'student',
  path: '/api/v1/students',
  constraints,
  validate: validateStudent,
  find: findStudent,
  insert: insertStudent,
  update: updateStudent,
  present: presentStudent,
};

export const createStudent = createCommand(studentsResource);
export const updateStudentCommand = updateCommand(studentsResource);
