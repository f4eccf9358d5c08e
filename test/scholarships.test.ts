import { sql } from 'slonik';
import { expectSameFailureThreeWays, type ErrorEnvelope } from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Scholarship {
  id: number;
  object: string;
  name: string;
  fund_id: number;
  description: string | null;
  status: string;
  created_at: string;
  updated_at: string;
}

let service: TestService;
let other: Tenant;
const ids = { fund: 0, secondFund: 0, closedFund: 0, otherFund: 0, otherScholarship: 0 };

const createFund = (code: string, extra: Record<string, unknown> = {}, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/funds', { key, body: { name: `Fund ${code}`, code, ...extra } }),
  );

const createScholarship = (body: Record<string, unknown> = {}, key?: string) =>
  created<Scholarship>(
    service.call('POST', '/api/v1/scholarships', {
      key,
      body: { name: 'STEM Excellence', fund_id: ids.fund, ...body },
    }),
  );

const patchScholarship = (id: number, body: Record<string, unknown>) =>
  service.call<Scholarship>('PATCH', `/api/v1/scholarships/${id}`, { body });

/** A valid scholarship body; an `undefined` override drops the field. */
const scholarshipBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Arts Prize',
  fund_id: ids.fund,
  ...overrides,
});

interface StoredScholarship {
  name: string;
  fund_id: number;
  description: string | null;
  status: string;
  updated_at: string;
}

async function scholarshipRow(id: number): Promise<StoredScholarship | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT name, fund_id, description, status, updated_at FROM scholarships WHERE id = ${id}`);
  return row as StoredScholarship | null;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  ids.fund = (await createFund('STEM')).id;
  ids.secondFund = (await createFund('ARTS')).id;
  ids.closedFund = (await createFund('OLD', { status: 'closed' })).id;
  ids.otherFund = (await createFund('STEM', {}, other.key)).id;
  ids.otherScholarship = (
    await createScholarship({ name: 'Theirs', fund_id: ids.otherFund }, other.key)
  ).id;
});

afterAll(async () => {
  await service?.close();
});

type Case = [
  name: string,
  body: () => Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];

describe('POST /scholarships validation: the real call and both dry runs give the same 422, and nothing is written', () => {
  const cases: Case[] = [
    [
      'name missing',
      () => scholarshipBody({ name: undefined }),
      [{ param: 'name', code: 'required' }],
    ],
    ['name blank', () => scholarshipBody({ name: ' ' }), [{ param: 'name', code: 'required' }]],
    [
      'name of 201 characters',
      () => scholarshipBody({ name: 'n'.repeat(201) }),
      [{ param: 'name', code: 'too_long' }],
    ],
    [
      'fund_id missing',
      () => scholarshipBody({ fund_id: undefined }),
      [{ param: 'fund_id', code: 'required' }],
    ],
    [
      'fund_id null',
      () => scholarshipBody({ fund_id: null }),
      [{ param: 'fund_id', code: 'required' }],
    ],
    [
      'fund_id as a string',
      () => scholarshipBody({ fund_id: String(ids.fund) }),
      [{ param: 'fund_id', code: 'invalid_type' }],
    ],
    [
      'fund_id not an integer',
      () => scholarshipBody({ fund_id: 1.5 }),
      [{ param: 'fund_id', code: 'invalid_type' }],
    ],
    [
      'fund_id of no fund',
      () => scholarshipBody({ fund_id: 987654 }),
      [{ param: 'fund_id', code: 'reference_not_found' }],
    ],
    [
      "fund_id of another institution's fund",
      () => scholarshipBody({ fund_id: ids.otherFund }),
      [{ param: 'fund_id', code: 'reference_not_found' }],
    ],
    [
      'fund_id of a closed fund',
      () => scholarshipBody({ fund_id: ids.closedFund }),
      [{ param: 'fund_id', code: 'reference_inactive' }],
    ],
    [
      'description of 2001 characters',
      () => scholarshipBody({ description: 'd'.repeat(2001) }),
      [{ param: 'description', code: 'too_long' }],
    ],
    [
      'status not allowed',
      () => scholarshipBody({ status: 'closed' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'an unknown field',
      () => scholarshipBody({ amount: 100 }),
      [{ param: 'amount', code: 'unknown_field' }],
    ],
    [
      'several problems at once',
      () => ({ name: '', fund_id: ids.closedFund, status: 'gone', object: 'scholarship' }),
      [
        { param: 'name', code: 'required' },
        { param: 'fund_id', code: 'reference_inactive' },
        { param: 'status', code: 'invalid_value' },
        { param: 'object', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(service, '/api/v1/scholarships', 'POST', body, expected, () =>
      service.count('scholarships'),
    );
  });
});

describe('scholarship CRUD', () => {
  test('create answers 201 with Location and the full scholarship, active by default', async () => {
    const response = await service.call<Scholarship>('POST', '/api/v1/scholarships', {
      body: { name: ' STEM Excellence ', fund_id: ids.fund },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/scholarships/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'scholarship',
      name: 'STEM Excellence',
      fund_id: ids.fund,
      description: null,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await scholarshipRow(response.body.id)).toMatchObject({
      name: 'STEM Excellence',
      fund_id: ids.fund,
      description: null,
      status: 'active',
    });
  });

  test('create stores a description and may start retired; names need not be unique', async () => {
    const a = await createScholarship({
      name: 'Twin',
      description: 'For twins.',
      status: 'retired',
    });
    const b = await createScholarship({ name: 'Twin' });
    expect(a).toMatchObject({ description: 'For twins.', status: 'retired' });
    expect(b.name).toBe('Twin');
  });

  test('a dry-run create answers 201 with id 0 and the real body, without Location or a row', async () => {
    const body = scholarshipBody({ description: 'Preview' });
    const before = await service.count('scholarships');
    const dry = await service.call<Scholarship>('POST', '/api/v1/scholarships?dry_run=true', {
      body,
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await service.count('scholarships')).toBe(before);
    const real = await service.call<Scholarship>('POST', '/api/v1/scholarships', { body });
    const strip = (s: Scholarship) => ({
      ...s,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
  });

  test('retrieve returns the scholarship as created', async () => {
    const scholarship = await createScholarship({ description: 'Readable' });
    const fetched = await service.call<Scholarship>(
      'GET',
      `/api/v1/scholarships/${scholarship.id}`,
    );
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(scholarship);
  });

  test('PATCH retires and reactivates a scholarship, and moves it to another active fund', async () => {
    const scholarship = await createScholarship();
    const retired = await patchScholarship(scholarship.id, { status: 'retired' });
    expect(retired.status).toBe(200);
    expect(retired.body.status).toBe('retired');
    expect((await scholarshipRow(scholarship.id))?.status).toBe('retired');

    const moved = await patchScholarship(scholarship.id, {
      status: 'active',
      fund_id: ids.secondFund,
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({
      ...scholarship,
      fund_id: ids.secondFund,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await scholarshipRow(scholarship.id)).toMatchObject({
      fund_id: ids.secondFund,
      status: 'active',
    });
  });

  test('a scholarship whose fund was closed later stays editable, even resending that fund', async () => {
    const fund = await createFund('CLOSES-LATER');
    const scholarship = await createScholarship({ fund_id: fund.id });
    const closed = await service.call('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    const renamed = await patchScholarship(scholarship.id, { name: 'Renamed', fund_id: fund.id });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', fund_id: fund.id });
  });

  test('a dry-run PATCH returns the would-be scholarship and changes nothing', async () => {
    const scholarship = await createScholarship();
    const before = await scholarshipRow(scholarship.id);
    const dry = await service.call<Scholarship>('PATCH', `/api/v1/scholarships/${scholarship.id}`, {
      body: { status: 'retired', description: 'Gone' },
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...scholarship,
      status: 'retired',
      description: 'Gone',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await scholarshipRow(scholarship.id)).toEqual(before);
  });

  test('scholarships have no DELETE: 405 with an Allow header, and the scholarship stays', async () => {
    const scholarship = await createScholarship();
    const response = await service.call<ErrorEnvelope>(
      'DELETE',
      `/api/v1/scholarships/${scholarship.id}`,
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(await scholarshipRow(scholarship.id)).not.toBeNull();
  });
});

describe('PATCH /scholarships/{id} validation: same 422 three ways, nothing changes', () => {
  let target: Scholarship;
  beforeAll(async () => {
    target = await createScholarship({ name: 'Patch target' });
  });

  const cases: Case[] = [
    [
      'moving to a closed fund',
      () => ({ fund_id: ids.closedFund }),
      [{ param: 'fund_id', code: 'reference_inactive' }],
    ],
    [
      "moving to another institution's fund",
      () => ({ fund_id: ids.otherFund }),
      [{ param: 'fund_id', code: 'reference_not_found' }],
    ],
    [
      'moving to no fund',
      () => ({ fund_id: 987654 }),
      [{ param: 'fund_id', code: 'reference_not_found' }],
    ],
    ['clearing the fund', () => ({ fund_id: null }), [{ param: 'fund_id', code: 'required' }]],
    ['clearing the name', () => ({ name: '' }), [{ param: 'name', code: 'required' }]],
    [
      'a status not allowed',
      () => ({ status: 'active ' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    ['read-only id', () => ({ id: 1 }), [{ param: 'id', code: 'unknown_field' }]],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      `/api/v1/scholarships/${target.id}`,
      'PATCH',
      body,
      expected,
      () => scholarshipRow(target.id),
    );
  });
});

describe('a scholarship that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ["another institution's scholarship", () => String(ids.otherScholarship)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { name: 'Hijack' }],
    ['PATCH', '?dry_run=true', { name: 'Hijack' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(
      method,
      `/api/v1/scholarships/${id()}${query}`,
      { body },
    );
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's scholarship is untouched", async () => {
    expect(await scholarshipRow(ids.otherScholarship)).toMatchObject({
      name: 'Theirs',
      fund_id: ids.otherFund,
    });
  });
});
