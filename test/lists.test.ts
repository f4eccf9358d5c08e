import { startTestService, type Tenant, type TestService } from './helpers/harness.js';

/**
 * The filters of every list (product.md §4): donors (q, role, status, assigned_user_id), gifts
 * (donor_id, fund_id, type, q, gift_date_from, gift_date_to), funds (q, status, restriction)
 * and users (q, role, status). `q` is a case-insensitive "contains", with % and _ taken
 * literally; invalid values are 400 invalid_parameter; a filter naming another institution's
 * record gives an empty page; filters stay pinned on every page.
 */

interface Page<T = { id: number }> {
  object: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: T[];
}
type ErrorBody = { error: { type: string; code: string; param?: string } };
type Body = Record<string, unknown>;

let service: TestService;
let other: Tenant;

const users: Record<string, number> = {};
const donors: Record<string, number> = {};
const funds: Record<string, number> = {};
const gifts: Record<string, number> = {};
const foreign: Record<string, number> = {};

async function create(path: string, body: Body, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', `/api/v1/${path}`, { body, key });
  expect(response.status).toBe(201);
  return response.body.id;
}

const get = <T = Page>(path: string) => service.call<T>('GET', path);
const query = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));

/** The ids of a first page (limit 100), newest first. */
async function listIds(resource: string, params: Record<string, string | number>) {
  const response = await get(`/api/v1/${resource}?${query({ limit: 100, ...params })}`);
  expect(response.status).toBe(200);
  expect(response.body.has_more).toBe(false);
  return response.body.data.map((row) => row.id);
}

/** Names -> ids, newest (highest id) first, as a list orders them. */
const newestFirst = (table: Record<string, number>, names: string[]) =>
  names.map((name) => table[name]!).sort((a, b) => b - a);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College');

  users.grace = await create('users', {
    email: 'grace.hopper@example.org',
    first_name: 'Grace',
    last_name: 'Hopper',
    role: 'admin',
  });
  users.alan = await create('users', {
    email: 'alan@example.org',
    first_name: 'Alan',
    last_name: 'Turing',
  });
  users.katherine = await create('users', {
    email: 'kj@example.org',
    first_name: 'Katherine',
    last_name: 'Johnson',
    role: 'viewer',
    status: 'deactivated',
  });
  users.literal = await create('users', {
    email: 'under_score@example.org',
    first_name: 'Percy',
    last_name: '100% Staff',
    role: 'scholarship_manager',
  });

  donors.ada = await create('donors', {
    role: 'Individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.org',
    assigned_user_id: users.grace,
  });
  donors.charles = await create('donors', {
    role: 'Individual',
    first_name: 'Charles',
    last_name: 'Babbage',
    email: 'charles@analytical.example.com',
    status: 'deceased',
    assigned_user_id: users.alan,
  });
  donors.curies = await create('donors', {
    role: 'Household',
    first_name: 'Marie and Pierre',
    last_name: 'Curie',
    email: 'curies@example.net',
    status: 'inactive',
  });
  donors.society = await create('donors', {
    role: 'Organization',
    organization_name: 'Lovelace Society',
    email: 'info@society.example.org',
    assigned_user_id: users.grace,
  });
  donors.trust = await create('donors', {
    role: 'Foundation',
    organization_name: 'Babbage Trust',
    email: 'trust@babbage.example.org',
  });
  donors.acme = await create('donors', {
    role: 'Corporation',
    organization_name: 'ACME 100% Widgets',
    email: 'sales@acme.example.com',
  });
  donors.percy = await create('donors', {
    role: 'Individual',
    first_name: 'Percy',
    last_name: 'Underwood',
    email: 'percy_u@example.org',
  });

  funds.library = await create('funds', {
    name: 'Library Endowment',
    code: 'LIB-END',
    restriction: 'permanently_restricted',
  });
  funds.annual = await create('funds', { name: 'Annual Fund', code: 'ANNUAL' });
  funds.science = await create('funds', {
    name: 'Science 100% Fund',
    code: 'SCI_100',
    restriction: 'temporarily_restricted',
    status: 'closed',
  });
  funds.campaign = await create('funds', {
    name: 'Old Campaign',
    code: 'OLD-LIB',
    status: 'closed',
  });

  const gift = (name: string, body: Body) =>
    create('gifts', body).then((id) => {
      gifts[name] = id;
    });
  // One at a time, so that ids follow this order.
  await gift('g1', {
    donor_id: donors.ada,
    amount: 100,
    subject: 'Annual appeal 2024',
    gift_date: '2024-01-15',
    fund_id: funds.annual,
  });
  await gift('g2', {
    donor_id: donors.ada,
    amount: 250.5,
    subject: 'Library naming gift',
    gift_date: '2024-03-01',
    type: 'check',
    check_number: '1001',
    fund_id: funds.library,
  });
  await gift('g3', {
    donor_id: donors.charles,
    amount: 75,
    subject: 'Memorial 50% match',
    gift_date: '2024-03-31',
    type: 'credit_card',
  });
  await gift('g4', {
    donor_id: donors.charles,
    amount: 500,
    subject: 'Year_end gift',
    gift_date: '2024-12-31',
    type: 'stock',
    fund_id: funds.library,
  });
  await gift('g5', {
    donor_id: donors.curies,
    amount: 20,
    subject: 'annual APPEAL 2025',
    gift_date: '2025-01-01',
    fund_id: funds.annual,
  });
  await gift('g6', {
    donor_id: donors.society,
    amount: 1000,
    subject: 'Gala sponsorship',
    gift_date: '2023-06-30',
    type: 'bank_transfer',
  });

  // Another institution with look-alike records.
  foreign.user = await create(
    'users',
    { email: 'grace.hopper@example.org', first_name: 'Grace', last_name: 'Hopper' },
    other.key,
  );
  foreign.donor = await create(
    'donors',
    {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.org',
      assigned_user_id: foreign.user,
    },
    other.key,
  );
  foreign.fund = await create('funds', { name: 'Library Endowment', code: 'LIB-END' }, other.key);
  foreign.gift = await create(
    'gifts',
    {
      donor_id: foreign.donor,
      amount: 100,
      subject: 'Annual appeal 2024',
      gift_date: '2024-01-15',
      fund_id: foreign.fund,
    },
    other.key,
  );
});
afterAll(async () => {
  await service?.close();
});

describe('donor filters', () => {
  test.each<[string, Record<string, string | number>, string[]]>([
    ['q on first and last name', { q: 'ada lovelace' }, ['ada']],
    ['q on last name and organization name, any case', { q: 'LOVELACE' }, ['ada', 'society']],
    ['q on organization name', { q: 'babbage tr' }, ['trust']],
    ['q on household name', { q: 'curie' }, ['curies']],
    ['q on email', { q: 'analytical' }, ['charles']],
    ['q on email domain', { q: 'EXAMPLE.COM' }, ['charles', 'acme']],
    ['q with % taken literally', { q: '100%' }, ['acme']],
    ['q with _ taken literally', { q: '_' }, ['percy']],
    ['q matching nothing', { q: 'zebra' }, []],
    ['role', { role: 'Individual' }, ['ada', 'charles', 'percy']],
    ['role Household', { role: 'Household' }, ['curies']],
    ['status', { status: 'deceased' }, ['charles']],
    ['status inactive', { status: 'inactive' }, ['curies']],
    ['status active', { status: 'active' }, ['ada', 'society', 'trust', 'acme', 'percy']],
    ['assigned_user_id', { assigned_user_id: 'grace' }, ['ada', 'society']],
    ['filters combined', { q: 'lovelace', role: 'Organization' }, ['society']],
  ])('%s', async (_label, params, expected) => {
    const resolved = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, k === 'assigned_user_id' ? users[v]! : v]),
    );
    expect(await listIds('donors', resolved)).toEqual(newestFirst(donors, expected));
  });
});

describe('gift filters', () => {
  test.each<[string, Record<string, string | number>, string[]]>([
    ['donor_id', { donor_id: 'ada' }, ['g1', 'g2']],
    ['fund_id', { fund_id: 'library' }, ['g2', 'g4']],
    ['type', { type: 'cash' }, ['g1', 'g5']],
    ['type check', { type: 'check' }, ['g2']],
    ['q on subject, any case', { q: 'ANNUAL appeal' }, ['g1', 'g5']],
    ['q with % taken literally', { q: '50%' }, ['g3']],
    ['q of a lone %', { q: '%' }, ['g3']],
    ['q with _ taken literally', { q: '_' }, ['g4']],
    ['gift_date_from is inclusive', { gift_date_from: '2024-03-01' }, ['g2', 'g3', 'g4', 'g5']],
    ['gift_date_to is inclusive', { gift_date_to: '2024-03-31' }, ['g1', 'g2', 'g3', 'g6']],
    [
      'a date range includes both ends',
      { gift_date_from: '2024-03-01', gift_date_to: '2024-03-31' },
      ['g2', 'g3'],
    ],
    ['a one-day range', { gift_date_from: '2024-12-31', gift_date_to: '2024-12-31' }, ['g4']],
    ['a range after every gift', { gift_date_from: '2025-01-02' }, []],
    ['an inverted range', { gift_date_from: '2024-12-31', gift_date_to: '2024-01-01' }, []],
    ['filters combined', { donor_id: 'charles', type: 'stock' }, ['g4']],
    ['filters combined, nothing in common', { donor_id: 'ada', type: 'stock' }, []],
  ])('%s', async (_label, params, expected) => {
    const resolved = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [
        k,
        k === 'donor_id' ? donors[v]! : k === 'fund_id' ? funds[v]! : v,
      ]),
    );
    expect(await listIds('gifts', resolved)).toEqual(newestFirst(gifts, expected));
  });
});

describe('fund filters', () => {
  test.each<[string, Record<string, string>, string[]]>([
    ['q on name, any case', { q: 'LIBRARY' }, ['library']],
    ['q on name or code', { q: 'lib' }, ['library', 'campaign']],
    ['q on code', { q: 'old-' }, ['campaign']],
    ['q with _ taken literally', { q: 'i_1' }, ['science']],
    ['q with % taken literally', { q: '100%' }, ['science']],
    ['status', { status: 'closed' }, ['science', 'campaign']],
    ['status active', { status: 'active' }, ['library', 'annual']],
    ['restriction', { restriction: 'permanently_restricted' }, ['library']],
    ['restriction unrestricted', { restriction: 'unrestricted' }, ['annual', 'campaign']],
    ['filters combined', { q: 'lib', status: 'closed' }, ['campaign']],
  ])('%s', async (_label, params, expected) => {
    expect(await listIds('funds', params)).toEqual(newestFirst(funds, expected));
  });
});

describe('user filters', () => {
  test.each<[string, Record<string, string>, string[]]>([
    ['q on first and last name, any case', { q: 'GRACE HOPPER' }, ['grace']],
    ['q on last name', { q: 'turing' }, ['alan']],
    ['q on email', { q: 'kj@' }, ['katherine']],
    ['q with _ taken literally', { q: '_' }, ['literal']],
    ['q with % taken literally', { q: '%' }, ['literal']],
    ['role', { role: 'viewer' }, ['katherine']],
    ['role gift_officer (the default)', { role: 'gift_officer' }, ['alan']],
    ['status', { status: 'deactivated' }, ['katherine']],
    ['status active', { status: 'active' }, ['grace', 'alan', 'literal']],
    ['filters combined', { q: 'example.org', role: 'admin' }, ['grace']],
  ])('%s', async (_label, params, expected) => {
    expect(await listIds('users', params)).toEqual(newestFirst(users, expected));
  });
});

describe('invalid filter values', () => {
  test.each([
    ['gifts', 'type', 'bogus'],
    ['gifts', 'type', 'CASH'],
    ['gifts', 'donor_id', 'abc'],
    ['gifts', 'donor_id', '0'],
    ['gifts', 'donor_id', '-3'],
    ['gifts', 'fund_id', '1.5'],
    ['gifts', 'gift_date_from', '2026-02-30'],
    ['gifts', 'gift_date_to', '2024-13-01'],
    ['gifts', 'gift_date_from', '20240101'],
    ['gifts', 'gift_date_to', 'yesterday'],
    ['donors', 'role', 'individual'],
    ['donors', 'status', 'dead'],
    ['donors', 'assigned_user_id', 'x'],
    ['funds', 'status', 'open'],
    ['funds', 'restriction', 'restricted'],
    ['users', 'role', 'owner'],
    ['users', 'status', 'inactive'],
  ])('GET /%s?%s=%s is 400 invalid_parameter', async (resource, param, value) => {
    const response = await get<ErrorBody>(`/api/v1/${resource}?${query({ [param]: value })}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
  });

  test('a filter of another list is 400 invalid_parameter', async () => {
    const response = await get<ErrorBody>(`/api/v1/funds?donor_id=${donors.ada}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'donor_id' });
  });

  test('a filter sent twice is 400 invalid_parameter', async () => {
    const response = await get<ErrorBody>('/api/v1/gifts?type=cash&type=check');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'type' });
  });
});

describe('another institution', () => {
  const emptyPage = { has_more: false, next_cursor: null, previous_cursor: null, data: [] };

  test.each([
    ['gifts', 'donor_id', () => foreign.donor],
    ['gifts', 'fund_id', () => foreign.fund],
    ['donors', 'assigned_user_id', () => foreign.user],
  ])('/%s?%s=<their record> is an empty page', async (resource, param, id) => {
    const response = await get(`/api/v1/${resource}?${param}=${id()}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(emptyPage);
  });

  test.each([
    ['donors', 'lovelace', () => foreign.donor],
    ['gifts', 'annual appeal', () => foreign.gift],
    ['funds', 'library', () => foreign.fund],
    ['users', 'hopper', () => foreign.user],
  ])('q on /%s finds only the caller institution records', async (resource, q, theirs) => {
    const mine = await listIds(resource, { q });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine).not.toContain(theirs());
    const response = await service.call<Page>('GET', `/api/v1/${resource}?${query({ q })}`, {
      key: other.key,
    });
    expect(response.body.data.map((row) => row.id)).toEqual([theirs()]);
  });
});

describe('filters pinned across pages', () => {
  async function walk(resource: string, params: Record<string, string | number>) {
    const forward: number[][] = [];
    let response = await get(`/api/v1/${resource}?${query({ ...params, limit: 2 })}`);
    for (;;) {
      expect(response.status).toBe(200);
      forward.push(response.body.data.map((row) => row.id));
      if (!response.body.next_cursor) break;
      // Later pages send the cursor alone: the filters travel inside it.
      response = await get(
        `/api/v1/${resource}?${query({ limit: 2, starting_after: response.body.next_cursor })}`,
      );
    }
    const backward: number[][] = [forward.at(-1)!];
    let cursor = response.body.previous_cursor;
    while (cursor) {
      const page = await get(`/api/v1/${resource}?${query({ limit: 2, ending_before: cursor })}`);
      expect(page.status).toBe(200);
      backward.unshift(page.body.data.map((row) => row.id));
      cursor = page.body.previous_cursor;
    }
    return { forward, backward };
  }

  test.each<[string, Record<string, string | number>, () => number[]]>([
    [
      'gifts',
      { gift_date_from: '2024-01-01' },
      () => newestFirst(gifts, ['g1', 'g2', 'g3', 'g4', 'g5']),
    ],
    ['gifts', { q: 'i' }, () => newestFirst(gifts, ['g2', 'g3', 'g4', 'g6'])],
    [
      'donors',
      { status: 'active' },
      () => newestFirst(donors, ['ada', 'society', 'trust', 'acme', 'percy']),
    ],
    ['funds', { q: 'l' }, () => newestFirst(funds, ['library', 'annual', 'campaign'])],
    ['users', { status: 'active' }, () => newestFirst(users, ['grace', 'alan', 'literal'])],
  ])(
    'walking /%s filtered by %j at limit=2, forward and back',
    async (resource, params, expected) => {
      const { forward, backward } = await walk(resource, params);
      expect(forward.flat()).toEqual(expected());
      expect(forward.slice(0, -1).every((page) => page.length === 2)).toBe(true);
      expect(backward.flat()).toEqual(expected());
    },
  );

  test('a cursor from a filtered list, sent with a different filter value, is 400 invalid_cursor', async () => {
    const first = await get(`/api/v1/gifts?${query({ type: 'cash', limit: 1 })}`);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const response = await get<ErrorBody>(
      `/api/v1/gifts?${query({ type: 'check', starting_after: first.body.next_cursor! })}`,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_cursor');
  });
});
