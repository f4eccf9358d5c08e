import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';
import { ISO_MS } from './helpers/responses.js';

/** Donor create, retrieve, update and delete over HTTP (product.md §1, §3, §4 "Donor"). */

interface Giving {
  total_amount: number;
  gift_count: number;
  first_gift_date: string | null;
  last_gift_date: string | null;
}
interface Donor {
  id: number;
  object: string;
  role: string;
  display_name: string;
  first_name: string | null;
  last_name: string | null;
  organization_name: string | null;
  email: string | null;
  phone: string | null;
  address: Record<string, string | null> | null;
  assigned_user_id: number | null;
  status: string;
  gives_anonymously: boolean;
  giving?: Giving;
  created_at: string;
  updated_at: string;
}
interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: { param: string; code: string }[];
  };
}
type Body = Record<string, unknown>;

let service: TestService;
let other: Tenant;
let officerId: number;

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College');
  const officer = await service.call<{ id: number }>('POST', '/api/v1/users', {
    body: { email: 'officer@example.org', first_name: 'Grace', last_name: 'Hopper' },
  });
  expect(officer.status).toBe(201);
  officerId = officer.body.id;
});

afterAll(async () => {
  await service?.close();
});

const withKey = (headers: Record<string, string> = {}) => ({
  'Idempotency-Key': randomUUID(),
  ...headers,
});

async function create(body: Body, key?: string): Promise<Donor> {
  const response = await service.call<Donor>('POST', '/api/v1/donors', {
    body,
    key,
    headers: withKey(),
  });
  expect(response.status).toBe(201);
  return response.body;
}

async function createGift(donorId: number, amount: number, giftDate: string): Promise<void> {
  const response = await service.call('POST', '/api/v1/gifts', {
    body: { donor_id: donorId, amount, subject: 'Annual fund', gift_date: giftDate },
    headers: withKey(),
  });
  expect(response.status).toBe(201);
}

const donorRow = (id: number) =>
  service.db.maybeOne(sql.unsafe`SELECT * FROM donors WHERE id = ${id}`);
const donorCount = () => service.count('donors');

function expectError(response: ApiResponse, status: number, type: string, code: string): void {
  expect(response.status).toBe(status);
  const { error } = response.body as unknown as ErrorEnvelope;
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
}

describe('donor create without an email needs an Idempotency-Key', () => {
  test.each([
    ['no email field', {}],
    ['email null', { email: null }],
    ['email blank', { email: '   ' }],
  ])('%s, real or dry run, without a key: 400 idempotency_key_required', async (_label, extra) => {
    const body = { role: 'Individual', first_name: 'Keyless', last_name: 'Donor', ...extra };
    const before = await donorCount();
    for (const [path, headers] of [
      ['/api/v1/donors', {}],
      ['/api/v1/donors?dry_run=true', {}],
      ['/api/v1/donors', { 'Dry-Run': 'true' }],
    ] as const) {
      const response = await service.call('POST', path, { body, headers });
      expectError(response, 400, 'idempotency_error', 'idempotency_key_required');
      expect((response.body as unknown as ErrorEnvelope).error.param).toBe('Idempotency-Key');
    }
    expect(await donorCount()).toBe(before);
  });

  test('with a key the same create succeeds, and the dry run too', async () => {
    const body = { role: 'Individual', first_name: 'Keyed', last_name: 'Donor' };
    const before = await donorCount();
    const dry = await service.call<Donor>('POST', '/api/v1/donors?dry_run=true', {
      body,
      headers: withKey(),
    });
    expect(dry.status).toBe(201);
    expect(await donorCount()).toBe(before);
    const real = await service.call<Donor>('POST', '/api/v1/donors', { body, headers: withKey() });
    expect(real.status).toBe(201);
    expect(real.body.email).toBeNull();
    expect(await donorCount()).toBe(before + 1);
  });

  test('with an email no key is needed', async () => {
    const response = await service.call<Donor>('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'Mailed',
        last_name: 'Donor',
        email: 'mailed@example.org',
      },
    });
    expect(response.status).toBe(201);
    expect(await donorRow(response.body.id)).not.toBeNull();
  });
});

describe('POST /donors', () => {
  test('answers 201 with a Location header and the full donor; the row holds the trimmed values', async () => {
    const response = await service.call<Donor>('POST', '/api/v1/donors', {
      headers: withKey(),
      body: {
        role: 'Individual',
        first_name: '  Ada ',
        last_name: 'Lovelace  ',
        email: ' Ada@Example.org ',
        phone: ' +44 20 7946 0000 ',
        address: {
          line1: '12 St James Square',
          city: 'London',
          postal_code: 'SW1Y 4JH',
          country: 'GB',
          region: ' ',
        },
        assigned_user_id: officerId,
        gives_anonymously: true,
      },
    });
    expect(response.status).toBe(201);
    const donor = response.body;
    expect(donor.id).toEqual(expect.any(Number));
    expect(donor.id).toBeGreaterThan(0);
    expect(response.headers.get('Location')).toBe(`/api/v1/donors/${donor.id}`);
    expect(donor).toEqual({
      id: donor.id,
      object: 'donor',
      role: 'Individual',
      display_name: 'Ada Lovelace',
      first_name: 'Ada',
      last_name: 'Lovelace',
      organization_name: null,
      email: 'Ada@Example.org',
      phone: '+44 20 7946 0000',
      address: {
        line1: '12 St James Square',
        line2: null,
        city: 'London',
        region: null,
        postal_code: 'SW1Y 4JH',
        country: 'GB',
      },
      assigned_user_id: officerId,
      status: 'active',
      gives_anonymously: true,
      tag_ids: [],
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(donor.updated_at).toBe(donor.created_at);
    expect(Math.abs(Date.parse(donor.created_at) - Date.now())).toBeLessThan(60_000);

    const row = await donorRow(donor.id);
    expect(row).toMatchObject({
      institution_id: service.tenant.institutionId,
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'Ada@Example.org',
      assigned_user_id: officerId,
    });
  });

  test('defaults status to active, gives_anonymously to false and absent fields to null', async () => {
    const donor = await create({ role: 'Foundation', organization_name: 'Wellcome Trust' });
    expect(donor).toMatchObject({
      status: 'active',
      gives_anonymously: false,
      first_name: null,
      last_name: null,
      email: null,
      phone: null,
      address: null,
      assigned_user_id: null,
    });
  });

  test.each([
    ['Individual', { first_name: 'Ada', last_name: 'Lovelace' }, 'Ada Lovelace'],
    [
      'Household with an organization_name',
      { first_name: 'Ada', last_name: 'King', organization_name: 'The King Household' },
      'The King Household',
    ],
    [
      'Household without an organization_name',
      { first_name: 'Ada', last_name: 'King' },
      'Ada King',
    ],
    ['Household with only a last_name', { last_name: 'King' }, 'King'],
    ['Organization', { organization_name: 'Analytical Society' }, 'Analytical Society'],
    [
      'Organization with personal names too',
      { organization_name: 'Babbage & Co', first_name: 'Charles', last_name: 'Babbage' },
      'Babbage & Co',
    ],
    ['Foundation', { organization_name: 'Lovelace Foundation' }, 'Lovelace Foundation'],
    ['Corporation', { organization_name: 'Engines plc' }, 'Engines plc'],
  ])('display_name of a %s', async (label, names, expected) => {
    const role = label.split(' ')[0];
    const created = await create({ role, ...names });
    expect(created.display_name).toBe(expected);
    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${created.id}`);
    expect(fetched.body.display_name).toBe(expected);
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) answers 201 with id 0, no Location and the body the real call then returns',
    async (_label, query, headers) => {
      const email = `dry.${randomUUID()}@example.org`;
      const body = {
        role: 'Household',
        last_name: 'Somerville',
        organization_name: 'The Somervilles',
        email,
        assigned_user_id: officerId,
      };
      const key = randomUUID();
      const before = await donorCount();

      const dry = await service.call<Donor>('POST', `/api/v1/donors${query}`, {
        body,
        headers: { 'Idempotency-Key': key, ...headers },
      });
      expect(dry.status).toBe(201);
      expect(dry.body.id).toBe(0);
      expect(dry.headers.get('Location')).toBeNull();
      expect(dry.body.created_at).toMatch(ISO_MS);
      expect(dry.body.updated_at).toMatch(ISO_MS);
      expect(await donorCount()).toBe(before);
      expect(
        await service.db.maybeOne(sql.unsafe`SELECT id FROM donors WHERE email = ${email}`),
      ).toBeNull();

      // The dry run neither took the email nor consumed the key.
      const real = await service.call<Donor>('POST', '/api/v1/donors', {
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(real.status).toBe(201);
      expect(real.headers.get('Idempotent-Replayed')).toBeNull();
      expect(real.body.id).toBeGreaterThan(0);
      expect(real.body).toEqual({
        ...dry.body,
        id: real.body.id,
        created_at: real.body.created_at,
        updated_at: real.body.updated_at,
      });
      expect(await donorCount()).toBe(before + 1);
    },
  );
});

test('concurrent creates with one email in different letter cases make exactly one donor', async () => {
  const emails = [
    'race@example.org',
    'RACE@example.org',
    'Race@Example.org',
    'race@EXAMPLE.ORG',
    'rAcE@example.org',
  ];
  const responses = await Promise.all(
    emails.map((email, index) =>
      service.call('POST', '/api/v1/donors', {
        body: { role: 'Individual', first_name: `Racer${index}`, last_name: 'Donor', email },
      }),
    ),
  );
  const statuses = responses.map((response) => response.status).sort();
  expect(statuses).toEqual([201, 422, 422, 422, 422]);
  for (const response of responses.filter((item) => item.status === 422)) {
    expect((response.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'email', code: 'already_in_use', message: expect.any(String) },
    ]);
  }
  const rows = await service.db.any(
    sql.unsafe`SELECT id FROM donors WHERE lower(email) = 'race@example.org'`,
  );
  expect(rows).toHaveLength(1);
});

describe('GET /donors/{id}', () => {
  test('returns the donor with giving totals computed from its gifts only', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Mary', last_name: 'Somerville' });
    const bystander = await create({ role: 'Individual', first_name: 'Other', last_name: 'Giver' });

    const empty = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      ...donor,
      giving: { total_amount: 0, gift_count: 0, first_gift_date: null, last_gift_date: null },
    });

    await createGift(donor.id, 100.5, '2026-01-15');
    await createGift(donor.id, 250, '2025-12-01');
    await createGift(donor.id, 0.25, '2025-12-31');
    await createGift(bystander.id, 1000, '2024-06-01');

    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.giving).toEqual({
      total_amount: 350.75,
      gift_count: 3,
      first_gift_date: '2025-12-01',
      last_gift_date: '2026-01-15',
    });
    expect({ ...fetched.body, giving: undefined }).toEqual({ ...donor, giving: undefined });
  });
});

describe('PATCH /donors/{id}', () => {
  test('merges the sent fields into the donor and keeps the rest', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Alan',
      last_name: 'Turing',
      email: 'alan@example.org',
      phone: '01234',
      assigned_user_id: officerId,
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { phone: ' 05678 ', gives_anonymously: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('Location')).toBeNull();
    expect(response.body).toEqual({
      ...donor,
      phone: '05678',
      gives_anonymously: true,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(donor.updated_at),
    );

    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect({ ...fetched.body, giving: undefined }).toEqual({ ...response.body, giving: undefined });
  });

  test('an empty body changes nothing but is accepted', async () => {
    const donor = await create({ role: 'Corporation', organization_name: 'Ferranti' });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, { body: {} });
    expect(response.status).toBe(200);
    expect({ ...response.body, updated_at: null }).toEqual({ ...donor, updated_at: null });
  });

  test('revalidates the merged record: a role change needs the new role’s fields', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Joan',
      last_name: 'Clarke',
      email: 'joan@example.org',
    });

    const refused = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Organization' },
    });
    expectError(refused, 422, 'invalid_request_error', 'validation_failed');
    expect((refused.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'organization_name', code: 'required', message: expect.any(String) },
    ]);
    expect(await donorRow(donor.id)).toMatchObject({ role: 'Individual', organization_name: null });

    const accepted = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Organization', organization_name: 'Bletchley Park Trust' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      role: 'Organization',
      organization_name: 'Bletchley Park Trust',
      display_name: 'Bletchley Park Trust',
      first_name: 'Joan',
      last_name: 'Clarke',
    });

    // Back to Individual: the organisation name must go at the same time.
    const notAllowed = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Individual' },
    });
    expectError(notAllowed, 422, 'invalid_request_error', 'validation_failed');
    expect((notAllowed.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'organization_name', code: 'not_allowed', message: expect.any(String) },
    ]);
    const back = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Individual', organization_name: null },
    });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      role: 'Individual',
      organization_name: null,
      display_name: 'Joan Clarke',
    });
  });

  test('null clears an optional field such as email, address or assigned_user_id', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Hedy',
      last_name: 'Lamarr',
      email: 'hedy@example.org',
      address: { city: 'Vienna', country: 'AT' },
      assigned_user_id: officerId,
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { email: null, address: null, assigned_user_id: null },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      email: null,
      address: null,
      assigned_user_id: null,
      first_name: 'Hedy',
    });
    expect(await donorRow(donor.id)).toMatchObject({
      email: null,
      address: null,
      assigned_user_id: null,
    });

    // The freed email can be used by another donor.
    const reuse = await service.call('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'Other',
        last_name: 'Hedy',
        email: 'HEDY@example.org',
      },
    });
    expect(reuse.status).toBe(201);
  });

  test('a donor may keep its own email in another letter case', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Katherine',
      last_name: 'Johnson',
      email: 'kj@example.org',
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { email: 'KJ@Example.org' },
    });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('KJ@Example.org');
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) returns the would-be donor and changes nothing',
    async (_label, query, headers) => {
      const donor = await create({
        role: 'Individual',
        first_name: 'Emmy',
        last_name: 'Noether',
        email: `emmy.${randomUUID()}@example.org`,
      });
      const rowBefore = await donorRow(donor.id);

      const dry = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}${query}`, {
        body: { role: 'Foundation', organization_name: 'Noether Foundation', email: null },
        headers,
      });
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({
        ...donor,
        role: 'Foundation',
        organization_name: 'Noether Foundation',
        display_name: 'Noether Foundation',
        email: null,
        updated_at: expect.stringMatching(ISO_MS),
      });

      expect(await donorRow(donor.id)).toEqual(rowBefore);
      const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
      expect({ ...fetched.body, giving: undefined }).toEqual({ ...donor, giving: undefined });
    },
  );
});

describe('DELETE /donors/{id}', () => {
  test('deletes the donor and answers {id, object, deleted}', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Short', last_name: 'Lived' });
    const response = await service.call('DELETE', `/api/v1/donors/${donor.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: donor.id, object: 'donor', deleted: true });
    expect(await donorRow(donor.id)).toBeNull();

    const fetched = await service.call('GET', `/api/v1/donors/${donor.id}`);
    expectError(fetched, 404, 'invalid_request_error', 'resource_not_found');
    const again = await service.call('DELETE', `/api/v1/donors/${donor.id}`);
    expectError(again, 404, 'invalid_request_error', 'resource_not_found');
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) answers like the delete and leaves the donor in place',
    async (_label, query, headers) => {
      const donor = await create({ role: 'Individual', first_name: 'Still', last_name: 'Here' });
      const rowBefore = await donorRow(donor.id);
      const response = await service.call('DELETE', `/api/v1/donors/${donor.id}${query}`, {
        headers,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: donor.id, object: 'donor', deleted: true });
      expect(await donorRow(donor.id)).toEqual(rowBefore);
      expect((await service.call('GET', `/api/v1/donors/${donor.id}`)).status).toBe(200);
    },
  );

  test('a donor with gifts is refused with 409 resource_in_use, for real and as a dry run', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Generous', last_name: 'Giver' });
    await createGift(donor.id, 50, '2026-03-01');
    for (const path of [`/api/v1/donors/${donor.id}`, `/api/v1/donors/${donor.id}?dry_run=true`]) {
      const response = await service.call('DELETE', path);
      expectError(response, 409, 'invalid_request_error', 'resource_in_use');
    }
    expect(await donorRow(donor.id)).not.toBeNull();
    expect(await service.count('gifts')).toBeGreaterThan(0);
  });
});

describe('records that cannot be reached answer 404 resource_not_found', () => {
  let foreignDonor: Donor;
  let foreignRow: unknown;
  beforeAll(async () => {
    foreignDonor = await create(
      {
        role: 'Individual',
        first_name: 'Foreign',
        last_name: 'Donor',
        email: 'foreign@example.org',
      },
      other.key,
    );
    foreignRow = await donorRow(foreignDonor.id);
  });

  const targets: [string, () => string][] = [
    ['an unknown id', () => '987654321'],
    ['a non-numeric id', () => 'abc'],
    ['a zero id', () => '0'],
    ['a fractional id', () => '1.5'],
    ['an id beyond the integer range', () => '99999999999999999999'],
    ["another institution's donor", () => String(foreignDonor.id)],
  ];
  const calls: [string, string, string, Body | undefined][] = [
    ['GET', 'GET', '', undefined],
    ['PATCH', 'PATCH', '', { phone: '123' }],
    ['PATCH dry run', 'PATCH', '?dry_run=true', { phone: '123' }],
    ['DELETE', 'DELETE', '', undefined],
    ['DELETE dry run', 'DELETE', '?dry_run=true', undefined],
  ];
  const cases = targets.flatMap(([target, id]) =>
    calls.map(([label, method, query, body]) => ({ target, id, label, method, query, body })),
  );

  test.each(cases)('$label of $target', async ({ id, method, query, body }) => {
    const before = await donorCount();
    const response = await service.call(method, `/api/v1/donors/${id()}${query}`, { body });
    expectError(response, 404, 'invalid_request_error', 'resource_not_found');
    expect(await donorCount()).toBe(before);
    expect(await donorRow(foreignDonor.id)).toEqual(foreignRow);
  });

  test('the other institution still sees its donor', async () => {
    const response = await service.call<Donor>('GET', `/api/v1/donors/${foreignDonor.id}`, {
      key: other.key,
    });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('foreign@example.org');
  });
});

test.each([
  ['PUT', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
  ['POST', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
])('%s %s is 405 method_not_allowed with an Allow header', async (method, path, allow) => {
  const response = await service.call(method, path, { body: {} });
  expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
  expect(response.headers.get('Allow')).toBe(allow);
});
