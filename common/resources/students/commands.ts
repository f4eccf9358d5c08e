import {
  createCommand,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { alreadyInUse, checkUnique, type UniqueValue } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentStudent } from './present.js';
import { studentResponse } from './response.js';
import {
  studentDefaults,
  studentIdentity,
  studentShape,
  studentTable,
  type StudentFields,
  type StudentRow,
} from './schema.js';

const studentNumber: UniqueValue = {
  table: 'students',
  column: 'student_number',
  ignoreCase: true,
  what: 'student',
};

const studentsResource: WritableResource<StudentRow, StudentFields> = {
  identity: studentIdentity,
  table: studentTable,
  shape: studentShape,
  defaults: studentDefaults,
  readOnly: readOnlyOf(studentResponse, studentShape),
  constraints: { students_institution_number_key: alreadyInUse('student_number', 'student') },
  present: presentStudent,
  rules: (ctx, check) => checkUnique(ctx, check, studentNumber),
};

export const createStudent = createCommand(studentsResource);
export const updateStudentCommand = updateCommand(studentsResource);
