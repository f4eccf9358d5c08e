import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { expectSameFailureThreeWays, type ErrorEnvelope } from './helpers/threeWays.js';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';
import { ISO_MS } from './helpers/responses.js';

/**
 * Users: the staff who are assigned donors (product.md §4 "User"). Validation runs three ways
 * (real call, `?dry_run=true`, `Dry-Run: true`) with identical answers and no writes; then
 * create, retrieve, update (including deactivation) and the absent DELETE.
 */

interface User {
  id: number;
  object: string;
  email: string;
  first_name: string;
  last_name: string;
  role: string;
  status: string;
  created_at: string;
  updated_at: string;
}
type ErrorBody = ErrorEnvelope['error'];
type Body = Record<string, unknown>;
type Expected = ReadonlyArray<readonly [param: string, code: string]>;

const TAKEN_EMAIL = 'Taken.User@Example.org';
const FOREIGN_EMAIL = 'foreign.user@example.org';
const DONOR_EMAIL = 'donor.only@example.org';

let service: TestService;
let other: Tenant;
let patchTarget: User;
let foreignUser: User;

async function createUser(body: Body, key?: string): Promise<User> {
  const response = await service.call<User>('POST', '/api/v1/users', { body, key });
  expect(response.status).toBe(201);
  return response.body;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College');
  await createUser({ email: TAKEN_EMAIL, first_name: 'Taken', last_name: 'User' });
  patchTarget = await createUser({
    email: 'patch.me@example.org',
    first_name: 'Patch',
    last_name: 'Target',
    role: 'viewer',
  });
  foreignUser = await createUser(
    { email: FOREIGN_EMAIL, first_name: 'Foreign', last_name: 'User' },
    other.key,
  );
  const donor = await service.call('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Donor', last_name: 'Only', email: DONOR_EMAIL },
  });
  expect(donor.status).toBe(201);
});

afterAll(async () => {
  await service?.close();
});

const userRow = (id: number) =>
  service.db.maybeOne(sql.unsafe`SELECT * FROM users WHERE id = ${id}`);

async function snapshot(): Promise<unknown> {
  return {
    users: await service.db.any(sql.unsafe`SELECT * FROM users ORDER BY id`),
    receipts: await service.count('write_receipts'),
  };
}

function expectError(response: ApiResponse, status: number, type: string, code: string): ErrorBody {
  expect(response.status).toBe(status);
  const { error } = response.body as unknown as ErrorEnvelope;
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
  return error;
}

/** The real call, then both dry-run forms: the same answer, nothing written. */
const runThreeWays = (method: 'POST' | 'PATCH', path: string, body: Body, expected: Expected) =>
  expectSameFailureThreeWays(
    service,
    path,
    method,
    body,
    expected.map(([param, code]) => ({ param, code })),
    snapshot,
  );

const long = (length: number) => 'x'.repeat(length);
const longEmail = (length: number) => `${'a'.repeat(length - '@example.org'.length)}@example.org`;
const staff = { email: 'new.staff@example.org', first_name: 'New', last_name: 'Staff' } as const;

interface Case {
  name: string;
  body: Body;
  expected: Expected;
}

const createCases: Case[] = [
  {
    name: 'empty body',
    body: {},
    expected: [
      ['email', 'required'],
      ['first_name', 'required'],
      ['last_name', 'required'],
    ],
  },
  {
    name: 'blank strings after trimming',
    body: { email: '  ', first_name: '', last_name: '\t' },
    expected: [
      ['email', 'required'],
      ['first_name', 'required'],
      ['last_name', 'required'],
    ],
  },
  {
    name: 'nulls',
    body: { email: null, first_name: null, last_name: null },
    expected: [
      ['email', 'required'],
      ['first_name', 'required'],
      ['last_name', 'required'],
    ],
  },
  {
    name: 'last_name missing',
    body: { email: staff.email, first_name: 'New' },
    expected: [['last_name', 'required']],
  },
  ...['not-an-email', 'staff@', 'staff@@example.org', 'new staff@example.org'].map((email) => ({
    name: `email ${JSON.stringify(email)}`,
    body: { ...staff, email },
    expected: [['email', 'invalid_format']] as const,
  })),
  {
    name: 'email over 254 characters',
    body: { ...staff, email: longEmail(255) },
    expected: [['email', 'too_long']],
  },
  {
    name: 'first_name over 100 characters',
    body: { ...staff, first_name: long(101) },
    expected: [['first_name', 'too_long']],
  },
  {
    name: 'last_name over 100 characters',
    body: { ...staff, last_name: long(101) },
    expected: [['last_name', 'too_long']],
  },
  ...['owner', 'Admin', 'gift officer', ''].map((role) => ({
    name: `role ${JSON.stringify(role)}`,
    body: { ...staff, role },
    expected: [['role', 'invalid_value']] as const,
  })),
  { name: 'role null', body: { ...staff, role: null }, expected: [['role', 'invalid_type']] },
  { name: 'role as a number', body: { ...staff, role: 1 }, expected: [['role', 'invalid_value']] },
  ...['inactive', 'Deactivated', 'deleted'].map((status) => ({
    name: `status ${JSON.stringify(status)}`,
    body: { ...staff, status },
    expected: [['status', 'invalid_value']] as const,
  })),
  {
    name: 'unknown field',
    body: { ...staff, password: 'hunter2' },
    expected: [['password', 'unknown_field']],
  },
  {
    name: 'read-only fields',
    body: {
      ...staff,
      id: 3,
      object: 'user',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    },
    expected: [
      ['id', 'unknown_field'],
      ['object', 'unknown_field'],
      ['created_at', 'unknown_field'],
      ['updated_at', 'unknown_field'],
    ],
  },
  {
    name: 'email already in use',
    body: { ...staff, email: TAKEN_EMAIL },
    expected: [['email', 'already_in_use']],
  },
  {
    name: 'email already in use in another letter case, with spaces',
    body: { ...staff, email: ' TAKEN.USER@example.ORG ' },
    expected: [['email', 'already_in_use']],
  },
  {
    name: 'several problems at once',
    body: { email: 'bad', first_name: long(101), role: 'boss', status: 'retired', team: 'A' },
    expected: [
      ['email', 'invalid_format'],
      ['first_name', 'too_long'],
      ['last_name', 'required'],
      ['role', 'invalid_value'],
      ['status', 'invalid_value'],
      ['team', 'unknown_field'],
    ],
  },
  {
    name: 'a taken email together with other problems',
    body: { email: TAKEN_EMAIL, first_name: '', last_name: 'Staff', display_name: 'x' },
    expected: [
      ['email', 'already_in_use'],
      ['first_name', 'required'],
      ['display_name', 'unknown_field'],
    ],
  },
];

describe('POST /users validation: the real call and both dry-run forms fail alike and write nothing', () => {
  test.each(createCases)('$name', async ({ body, expected }) => {
    await runThreeWays('POST', '/api/v1/users', body, expected);
  });
});

/**
 * Known bug: common/validation/validateBody.ts codeOf() reports zod's invalid_type as `required`
 * because zod 4 issues carry no `input` unless parsed with `reportInput: true`.
 */
const typeCases: Case[] = [
  {
    name: 'email as a number',
    body: { ...staff, email: 5 },
    expected: [['email', 'invalid_type']],
  },
  {
    name: 'first_name as a number',
    body: { ...staff, first_name: 1 },
    expected: [['first_name', 'invalid_type']],
  },
  {
    name: 'last_name as a boolean',
    body: { ...staff, last_name: false },
    expected: [['last_name', 'invalid_type']],
  },
  {
    name: 'first_name as an array',
    body: { ...staff, first_name: ['New'] },
    expected: [['first_name', 'invalid_type']],
  },
];

describe('POST /users reports a wrong JSON type as invalid_type ', () => {
  test.each(typeCases)('$name', async ({ body, expected }) => {
    await runThreeWays('POST', '/api/v1/users', body, expected);
  });
});

const patchCases: Case[] = [
  { name: 'email cleared with null', body: { email: null }, expected: [['email', 'required']] },
  {
    name: 'first_name cleared with blanks',
    body: { first_name: '   ' },
    expected: [['first_name', 'required']],
  },
  {
    name: 'last_name cleared with an empty string',
    body: { last_name: '' },
    expected: [['last_name', 'required']],
  },
  {
    name: 'email of another user',
    body: { email: TAKEN_EMAIL.toLowerCase() },
    expected: [['email', 'already_in_use']],
  },
  { name: 'malformed email', body: { email: 'patch.me' }, expected: [['email', 'invalid_format']] },
  { name: 'unknown role', body: { role: 'superuser' }, expected: [['role', 'invalid_value']] },
  { name: 'unknown status', body: { status: 'inactive' }, expected: [['status', 'invalid_value']] },
  { name: 'status null', body: { status: null }, expected: [['status', 'invalid_type']] },
  { name: 'id (read-only)', body: { id: 1 }, expected: [['id', 'unknown_field']] },
  {
    name: 'several problems at once',
    body: { email: '', last_name: long(101), status: 'on_leave', nickname: 'P' },
    expected: [
      ['email', 'required'],
      ['last_name', 'too_long'],
      ['status', 'invalid_value'],
      ['nickname', 'unknown_field'],
    ],
  },
];

describe('PATCH /users/{id} validation: the merged record is revalidated, alike for real and dry runs', () => {
  test.each(patchCases)('$name', async ({ body, expected }) => {
    await runThreeWays('PATCH', `/api/v1/users/${patchTarget.id}`, body, expected);
  });
});

describe('POST /users accepts valid edge cases, as a dry run first and then for real', () => {
  test.each([
    {
      name: "an email only another institution's user has",
      body: { ...staff, email: FOREIGN_EMAIL.toUpperCase() },
    },
    { name: 'an email a donor of the institution has', body: { ...staff, email: DONOR_EMAIL } },
    {
      name: 'maximum lengths',
      body: { email: longEmail(254), first_name: long(100), last_name: long(100) },
    },
    ...['admin', 'gift_officer', 'scholarship_manager', 'viewer'].map((role) => ({
      name: `role ${role}`,
      body: { ...staff, email: `${role}@example.org`, role },
    })),
    {
      name: 'created already deactivated',
      body: { ...staff, email: 'former@example.org', status: 'deactivated' },
    },
  ])('$name', async ({ body }) => {
    const before = await service.count('users', service.tenant.institutionId);
    const dry = await service.call<User>('POST', '/api/v1/users', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(await service.count('users', service.tenant.institutionId)).toBe(before);

    const real = await service.call<User>('POST', '/api/v1/users', { body });
    expect(real.status).toBe(201);
    expect(real.body.id).toBeGreaterThan(0);
    expect({ ...real.body, id: 0, created_at: null, updated_at: null }).toEqual({
      ...dry.body,
      created_at: null,
      updated_at: null,
    });
    expect(await service.count('users', service.tenant.institutionId)).toBe(before + 1);
  });
});

describe('POST /users', () => {
  test('answers 201 with a Location header and the full user, trimmed, with default role and status', async () => {
    const response = await service.call<User>('POST', '/api/v1/users', {
      body: { email: ' Rosalind@Example.org ', first_name: ' Rosalind', last_name: 'Franklin ' },
    });
    expect(response.status).toBe(201);
    const user = response.body;
    expect(user.id).toBeGreaterThan(0);
    expect(response.headers.get('Location')).toBe(`/api/v1/users/${user.id}`);
    expect(user).toEqual({
      id: user.id,
      object: 'user',
      email: 'Rosalind@Example.org',
      first_name: 'Rosalind',
      last_name: 'Franklin',
      role: 'gift_officer',
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(user.updated_at).toBe(user.created_at);
    expect(await userRow(user.id)).toMatchObject({
      institution_id: service.tenant.institutionId,
      email: 'Rosalind@Example.org',
      role: 'gift_officer',
      status: 'active',
    });
  });

  test('needs no Idempotency-Key', async () => {
    const response = await service.call<User>('POST', '/api/v1/users', {
      body: { email: 'nokey@example.org', first_name: 'No', last_name: 'Key' },
    });
    expect(response.status).toBe(201);
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) answers 201 with id 0, no Location and no row; the email stays free',
    async (_label, query, headers) => {
      const body = {
        email: `dry.${randomUUID()}@example.org`,
        first_name: 'Dry',
        last_name: 'Run',
        role: 'admin',
      };
      const before = await service.count('users');
      const dry = await service.call<User>('POST', `/api/v1/users${query}`, { body, headers });
      expect(dry.status).toBe(201);
      expect(dry.headers.get('Location')).toBeNull();
      expect(dry.body).toEqual({
        id: 0,
        object: 'user',
        ...body,
        status: 'active',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(await service.count('users')).toBe(before);

      const real = await service.call<User>('POST', '/api/v1/users', { body });
      expect(real.status).toBe(201);
      expect(await service.count('users')).toBe(before + 1);
    },
  );

  test('concurrent creates with one email in different letter cases make exactly one user', async () => {
    const emails = ['race@example.org', 'RACE@example.org', 'Race@Example.org', 'race@EXAMPLE.org'];
    const responses = await Promise.all(
      emails.map((email) =>
        service.call('POST', '/api/v1/users', {
          body: { email, first_name: 'Race', last_name: 'Condition' },
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422, 422]);
    for (const response of responses.filter((item) => item.status === 422)) {
      expect((response.body as unknown as ErrorEnvelope).error.errors).toEqual([
        { param: 'email', code: 'already_in_use', message: expect.any(String) },
      ]);
    }
    const rows = await service.db.any(
      sql.unsafe`SELECT id FROM users WHERE lower(email) = 'race@example.org'`,
    );
    expect(rows).toHaveLength(1);
  });
});

describe('GET /users/{id}', () => {
  test('returns the user as created', async () => {
    const user = await createUser({
      email: 'barbara@example.org',
      first_name: 'Barbara',
      last_name: 'Liskov',
      role: 'scholarship_manager',
    });
    const response = await service.call<User>('GET', `/api/v1/users/${user.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(user);
  });
});

describe('PATCH /users/{id}', () => {
  test('merges the sent fields and keeps the rest', async () => {
    const user = await createUser({
      email: 'frances@example.org',
      first_name: 'Frances',
      last_name: 'Allen',
    });
    const response = await service.call<User>('PATCH', `/api/v1/users/${user.id}`, {
      body: { role: 'admin', last_name: ' Allen-Smith ' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('Location')).toBeNull();
    expect(response.body).toEqual({
      ...user,
      role: 'admin',
      last_name: 'Allen-Smith',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(user.updated_at),
    );
    expect((await service.call<User>('GET', `/api/v1/users/${user.id}`)).body).toEqual(
      response.body,
    );
  });

  test('a user may keep its own email in another letter case', async () => {
    const user = await createUser({
      email: 'margaret@example.org',
      first_name: 'Margaret',
      last_name: 'Hamilton',
    });
    const response = await service.call<User>('PATCH', `/api/v1/users/${user.id}`, {
      body: { email: 'Margaret@EXAMPLE.org' },
    });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('Margaret@EXAMPLE.org');
  });

  test('deactivation stops new donor assignments; existing ones stay; reactivation allows them again', async () => {
    const user = await createUser({
      email: 'radia@example.org',
      first_name: 'Radia',
      last_name: 'Perlman',
    });
    const assigned = await service.call<{ id: number; assigned_user_id: number }>(
      'POST',
      '/api/v1/donors',
      {
        body: {
          role: 'Individual',
          first_name: 'Assigned',
          last_name: 'Donor',
          email: 'assigned@example.org',
          assigned_user_id: user.id,
        },
      },
    );
    expect(assigned.status).toBe(201);

    const deactivated = await service.call<User>('PATCH', `/api/v1/users/${user.id}`, {
      body: { status: 'deactivated' },
    });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.status).toBe('deactivated');
    expect(await userRow(user.id)).toMatchObject({ status: 'deactivated' });

    const refused = await service.call('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'New',
        last_name: 'Donor',
        email: 'new.donor@example.org',
        assigned_user_id: user.id,
      },
    });
    const error = expectError(refused, 422, 'invalid_request_error', 'validation_failed');
    expect(error.errors).toEqual([
      { param: 'assigned_user_id', code: 'reference_inactive', message: expect.any(String) },
    ]);

    // The donor already assigned keeps its user and can still be edited.
    const edited = await service.call<{ assigned_user_id: number; phone: string }>(
      'PATCH',
      `/api/v1/donors/${assigned.body.id}`,
      {
        body: { phone: '555' },
      },
    );
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ assigned_user_id: user.id, phone: '555' });

    const reactivated = await service.call<User>('PATCH', `/api/v1/users/${user.id}`, {
      body: { status: 'active' },
    });
    expect(reactivated.body.status).toBe('active');
    const accepted = await service.call('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'New',
        last_name: 'Donor',
        email: 'new.donor@example.org',
        assigned_user_id: user.id,
      },
    });
    expect(accepted.status).toBe(201);
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) returns the would-be user and changes nothing',
    async (_label, query, headers) => {
      const user = await createUser({
        email: `shafi.${randomUUID()}@example.org`,
        first_name: 'Shafi',
        last_name: 'Goldwasser',
      });
      const rowBefore = await userRow(user.id);
      const dry = await service.call<User>('PATCH', `/api/v1/users/${user.id}${query}`, {
        body: { status: 'deactivated', role: 'viewer' },
        headers,
      });
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({
        ...user,
        status: 'deactivated',
        role: 'viewer',
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(await userRow(user.id)).toEqual(rowBefore);
      expect((await service.call<User>('GET', `/api/v1/users/${user.id}`)).body).toEqual(user);
    },
  );
});

describe('users that cannot be reached answer 404 resource_not_found', () => {
  const targets: [string, () => string][] = [
    ['an unknown id', () => '987654321'],
    ['a non-numeric id', () => 'me'],
    ['a negative id', () => '-1'],
    ["another institution's user", () => String(foreignUser.id)],
  ];
  const calls: [string, string, string, Body | undefined][] = [
    ['GET', 'GET', '', undefined],
    ['PATCH', 'PATCH', '', { first_name: 'Changed' }],
    ['PATCH dry run', 'PATCH', '?dry_run=true', { first_name: 'Changed' }],
  ];
  const cases = targets.flatMap(([target, id]) =>
    calls.map(([label, method, query, body]) => ({ target, id, label, method, query, body })),
  );

  test.each(cases)('$label of $target', async ({ id, method, query, body }) => {
    const foreignBefore = await userRow(foreignUser.id);
    const response = await service.call(method, `/api/v1/users/${id()}${query}`, { body });
    const error = expectError(response, 404, 'invalid_request_error', 'resource_not_found');
    expect(error.message).toEqual(expect.any(String));
    expect(await userRow(foreignUser.id)).toEqual(foreignBefore);
  });
});

describe('users cannot be deleted', () => {
  test.each([
    ['DELETE', ''],
    ['DELETE', '?dry_run=true'],
    ['PUT', ''],
  ])('%s /users/{id}%s is 405 method_not_allowed with Allow: GET, PATCH', async (method, query) => {
    const user = await createUser({
      email: `kept.${randomUUID()}@example.org`,
      first_name: 'Kept',
      last_name: 'User',
    });
    const response = await service.call(
      method,
      `/api/v1/users/${user.id}${query}`,
      method === 'PUT' ? { body: {} } : {},
    );
    expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(await userRow(user.id)).not.toBeNull();
  });
});
