import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { type ErrorEnvelope } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import {
  createUser,
  expectError,
  service,
  setUpUserTests,
  userRow,
  type User,
  foreignUser,
  type Body,
} from './helpers/users.js';

setUpUserTests();

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
