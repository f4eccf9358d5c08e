import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createStudent, updateStudentCommand } from './commands.js';
import { studentList } from './list.js';
import { presentStudent } from './present.js';
import { studentResponse } from './response.js';
import { studentDefaults, studentIdentity, studentShape, studentTable } from './schema.js';

export const students: ResourceDescriptor = {
  ...studentIdentity,
  permission: 'scholarships',
  shape: studentShape,
  defaults: studentDefaults,
  response: studentResponse,
  commands: { create: createStudent, update: updateStudentCommand },
  list: studentList,
  retrieve: retrieveFrom(studentTable, presentStudent),
  text: {
    tag: 'Students',
    component: 'Student',
    notes: { student_number: 'Unique per institution (422 `already_in_use`).' },
    rules: '`student_number` is unique per institution.',
    filterNotes: { q: 'The full name, student number or email contains this text.' },
    examples: {
      create: {
        student_number: 'S-2027-0042',
        first_name: 'Katherine',
        last_name: 'Johnson',
        email: 'k.johnson@students.example.edu',
      },
      update: { email: 'katherine.johnson@students.example.edu' },
    },
  },
};
