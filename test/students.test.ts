import { sql } from 'slonik';
import {
  expectSameFailureThreeWays,
  fieldErrors,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Student {
  id: number;
  object: string;
  student_number: string;
  first_name: string;
  last_name: string;
  email: string | null;
  created_at: string;
  updated_at: string;
}

let service: TestService;
let other: Tenant;
const ids = { otherStudent: 0 };
let numberCounter = 0;

/** A student with a fresh student number; overrides win. */
const createStudent = (body: Record<string, unknown> = {}, key?: string) =>
  created<Student>(
    service.call('POST', '/api/v1/students', {
      key,
      body: {
        student_number: `N-${++numberCounter}`,
        first_name: 'Ada',
        last_name: 'Lovelace',
        ...body,
      },
    }),
  );

/** A valid student body whose number is free; an `undefined` override drops the field. */
const studentBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  student_number: 'NEVER-CREATED',
  first_name: 'Grace',
  last_name: 'Hopper',
  ...overrides,
});

interface StoredStudent {
  student_number: string;
  first_name: string;
  last_name: string;
  email: string | null;
  updated_at: string;
}

async function studentRow(id: number): Promise<StoredStudent | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT student_number, first_name, last_name, email, updated_at FROM students WHERE id = ${id}`);
  return row as StoredStudent | null;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  await createStudent({ student_number: 'S-TAKEN' });
  ids.otherStudent = (await createStudent({ student_number: 'S-THEIRS' }, other.key)).id;
});

afterAll(async () => {
  await service?.close();
});

type Case = [
  name: string,
  body: Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];

describe('POST /students validation: the real call and both dry runs give the same 422, and nothing is written', () => {
  const cases: Case[] = [
    [
      'student_number missing',
      studentBody({ student_number: undefined }),
      [{ param: 'student_number', code: 'required' }],
    ],
    [
      'student_number blank',
      studentBody({ student_number: ' ' }),
      [{ param: 'student_number', code: 'required' }],
    ],
    [
      'student_number of 65 characters',
      studentBody({ student_number: 'S'.repeat(65) }),
      [{ param: 'student_number', code: 'too_long' }],
    ],
    [
      'student_number as a number',
      studentBody({ student_number: 1001 }),
      [{ param: 'student_number', code: 'invalid_type' }],
    ],
    [
      'student_number already used',
      studentBody({ student_number: 'S-TAKEN' }),
      [{ param: 'student_number', code: 'already_in_use' }],
    ],
    [
      'student_number already used in another letter case, once trimmed',
      studentBody({ student_number: ' s-taken ' }),
      [{ param: 'student_number', code: 'already_in_use' }],
    ],
    [
      'first_name missing',
      studentBody({ first_name: undefined }),
      [{ param: 'first_name', code: 'required' }],
    ],
    [
      'first_name null',
      studentBody({ first_name: null }),
      [{ param: 'first_name', code: 'required' }],
    ],
    [
      'last_name missing',
      studentBody({ last_name: undefined }),
      [{ param: 'last_name', code: 'required' }],
    ],
    [
      'last_name of 101 characters',
      studentBody({ last_name: 'l'.repeat(101) }),
      [{ param: 'last_name', code: 'too_long' }],
    ],
    [
      'email not an address',
      studentBody({ email: 'not-an-email' }),
      [{ param: 'email', code: 'invalid_format' }],
    ],
    ['email as a number', studentBody({ email: 5 }), [{ param: 'email', code: 'invalid_type' }]],
    ['an unknown field', studentBody({ gpa: 4 }), [{ param: 'gpa', code: 'unknown_field' }]],
    [
      'several problems at once',
      { student_number: 'S-TAKEN', first_name: '', email: 'x@', object: 'student' },
      [
        { param: 'student_number', code: 'already_in_use' },
        { param: 'first_name', code: 'required' },
        { param: 'last_name', code: 'required' },
        { param: 'email', code: 'invalid_format' },
        { param: 'object', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(service, '/api/v1/students', 'POST', body, expected, () =>
      service.count('students'),
    );
  });
});

describe('student CRUD', () => {
  test('create answers 201 with Location and the full student, trimmed, and writes the row', async () => {
    const response = await service.call<Student>('POST', '/api/v1/students', {
      body: {
        student_number: ' S-1001 ',
        first_name: ' Ada ',
        last_name: 'Lovelace',
        email: 'ada@example.edu',
      },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/students/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'student',
      student_number: 'S-1001',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.edu',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await studentRow(response.body.id)).toMatchObject({
      student_number: 'S-1001',
      first_name: 'Ada',
      email: 'ada@example.edu',
    });
  });

  test('email is optional, and may be shared by two students', async () => {
    const first = await createStudent();
    expect(first.email).toBeNull();
    const a = await createStudent({ email: 'family@example.org' });
    const b = await createStudent({ email: 'family@example.org' });
    expect([a.email, b.email]).toEqual(['family@example.org', 'family@example.org']);
  });

  test('a student number of exactly 64 characters is accepted', async () => {
    const student = await createStudent({ student_number: 'L'.repeat(64) });
    expect(student.student_number).toHaveLength(64);
  });

  test('a dry-run create answers 201 with id 0 and the real body, without Location, a row or holding the number', async () => {
    const body = studentBody({ student_number: 'S-DRY' });
    const before = await service.count('students');
    const dry = await service.call<Student>('POST', '/api/v1/students', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await service.count('students')).toBe(before);
    const real = await service.call<Student>('POST', '/api/v1/students', { body });
    expect(real.status).toBe(201);
    const strip = (s: Student) => ({
      ...s,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
  });

  test('retrieve returns the student as created', async () => {
    const student = await createStudent({ email: 'r@example.org' });
    const fetched = await service.call<Student>('GET', `/api/v1/students/${student.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(student);
  });

  test('PATCH merges the sent fields, may resend the own number and may clear the email', async () => {
    const student = await createStudent({ student_number: 'S-MERGE', email: 'm@example.org' });
    const patched = await service.call<Student>('PATCH', `/api/v1/students/${student.id}`, {
      body: { student_number: 'S-MERGE', last_name: 'Byron', email: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...student,
      last_name: 'Byron',
      email: null,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await studentRow(student.id)).toMatchObject({
      student_number: 'S-MERGE',
      last_name: 'Byron',
      email: null,
    });
  });

  test('a dry-run PATCH returns the would-be student and changes nothing', async () => {
    const student = await createStudent();
    const before = await studentRow(student.id);
    const dry = await service.call<Student>(
      'PATCH',
      `/api/v1/students/${student.id}?dry_run=true`,
      {
        body: { first_name: 'Preview' },
      },
    );
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...student,
      first_name: 'Preview',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await studentRow(student.id)).toEqual(before);
  });

  test('concurrent creates with one student number: exactly one 201, the rest 422 already_in_use', async () => {
    const responses = await Promise.all(
      [1, 2, 3, 4].map(() =>
        service.call('POST', '/api/v1/students', {
          body: studentBody({ student_number: 'S-RACE' }),
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(fieldErrors(response)).toEqual([{ param: 'student_number', code: 'already_in_use' }]);
    }
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM students WHERE student_number = 'S-RACE'`,
      ),
    ).toBe(1);
  });

  test('students have no DELETE: 405 with an Allow header, and the student stays', async () => {
    const student = await createStudent();
    const response = await service.call<ErrorEnvelope>('DELETE', `/api/v1/students/${student.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(response.body.error.code).toBe('method_not_allowed');
    expect(await studentRow(student.id)).not.toBeNull();
  });
});

describe('PATCH /students/{id} validation: same 422 three ways, nothing changes', () => {
  let target: Student;
  beforeAll(async () => {
    target = await createStudent({ student_number: 'S-TARGET' });
  });

  const cases: Case[] = [
    [
      "another student's number",
      { student_number: 's-taken' },
      [{ param: 'student_number', code: 'already_in_use' }],
    ],
    [
      'student_number cleared',
      { student_number: null },
      [{ param: 'student_number', code: 'required' }],
    ],
    ['first_name cleared', { first_name: '' }, [{ param: 'first_name', code: 'required' }]],
    ['an invalid email', { email: 'nope' }, [{ param: 'email', code: 'invalid_format' }]],
    [
      'read-only updated_at',
      { updated_at: '2026-01-01T00:00:00.000Z' },
      [{ param: 'updated_at', code: 'unknown_field' }],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      `/api/v1/students/${target.id}`,
      'PATCH',
      body,
      expected,
      () => studentRow(target.id),
    );
  });
});

describe('a student that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ["another institution's student", () => String(ids.otherStudent)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { first_name: 'Hijack' }],
    ['PATCH', '?dry_run=true', { first_name: 'Hijack' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/students/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's student is untouched, and its number is free here", async () => {
    expect(await studentRow(ids.otherStudent)).toMatchObject({
      student_number: 'S-THEIRS',
      first_name: 'Ada',
    });
    const mine = await createStudent({ student_number: 'S-THEIRS' });
    expect(mine.student_number).toBe('S-THEIRS');
  });
});
