import { sql } from 'slonik';
import {
  expectSameFailureThreeWays,
  fieldErrors,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Fund {
  id: number;
  object: string;
  name: string;
  code: string;
  description: string | null;
  restriction: string;
  endowed: boolean;
  award_limit: number | null;
  status: string;
  created_at: string;
  updated_at: string;
}

let service: TestService;
let other: Tenant;
const ids = { donor: 0, taken: 0, otherFund: 0 };

const createFund = (body: Record<string, unknown>, key?: string) =>
  created<Fund>(
    service.call('POST', '/api/v1/funds', {
      key,
      body: { name: `Fund ${String(body.code)}`, ...body },
    }),
  );

/** A valid fund body whose code is free; overrides win, and an `undefined` override drops the field. */
const fundBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'STEM Endowment',
  code: 'NEVER-CREATED',
  ...overrides,
});

/** A fund as stored, the award limit as the database's own numeric text. */
interface StoredFund {
  name: string;
  code: string;
  description: string | null;
  restriction: string;
  endowed: boolean;
  award_limit: string | null;
  status: string;
  updated_at: string;
}

async function fundRow(id: number): Promise<StoredFund | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT name, code, description, restriction, endowed, award_limit::text AS award_limit, status, updated_at
    FROM funds WHERE id = ${id}`);
  return row as StoredFund | null;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  ids.taken = (await createFund({ code: 'TAKEN' })).id;
  ids.otherFund = (await createFund({ code: 'THEIRS', name: 'Their fund' }, other.key)).id;
  ids.donor = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: {
          role: 'Individual',
          first_name: 'Grace',
          last_name: 'Hopper',
          email: 'grace@example.org',
        },
      }),
    )
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

const createCases: Case[] = [
  // name
  ['name missing', () => fundBody({ name: undefined }), [{ param: 'name', code: 'required' }]],
  [
    'name blank after trimming',
    () => fundBody({ name: '   ' }),
    [{ param: 'name', code: 'required' }],
  ],
  [
    'name of 201 characters',
    () => fundBody({ name: 'n'.repeat(201) }),
    [{ param: 'name', code: 'too_long' }],
  ],
  ['name as a number', () => fundBody({ name: 7 }), [{ param: 'name', code: 'invalid_type' }]],
  // code
  ['code missing', () => fundBody({ code: undefined }), [{ param: 'code', code: 'required' }]],
  ['code empty', () => fundBody({ code: '' }), [{ param: 'code', code: 'required' }]],
  [
    'code in lower case',
    () => fundBody({ code: 'stem' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code in mixed case',
    () => fundBody({ code: 'Stem' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code of 33 characters',
    () => fundBody({ code: 'C'.repeat(33) }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code with a leading dash',
    () => fundBody({ code: '-STEM' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code with a leading underscore',
    () => fundBody({ code: '_STEM' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code with a space inside',
    () => fundBody({ code: 'ST EM' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code with a dot',
    () => fundBody({ code: 'ST.EM' }),
    [{ param: 'code', code: 'invalid_format' }],
  ],
  [
    'code already used in the institution',
    () => fundBody({ code: 'TAKEN' }),
    [{ param: 'code', code: 'already_in_use' }],
  ],
  [
    'code already used, once trimmed',
    () => fundBody({ code: '  TAKEN ' }),
    [{ param: 'code', code: 'already_in_use' }],
  ],
  ['code as a number', () => fundBody({ code: 42 }), [{ param: 'code', code: 'invalid_type' }]],
  // description
  [
    'description of 2001 characters',
    () => fundBody({ description: 'd'.repeat(2001) }),
    [{ param: 'description', code: 'too_long' }],
  ],
  // restriction
  [
    'restriction not allowed',
    () => fundBody({ restriction: 'restricted' }),
    [{ param: 'restriction', code: 'invalid_value' }],
  ],
  [
    'restriction in another letter case',
    () => fundBody({ restriction: 'Unrestricted' }),
    [{ param: 'restriction', code: 'invalid_value' }],
  ],
  [
    'restriction null',
    () => fundBody({ restriction: null }),
    [{ param: 'restriction', code: 'invalid_type' }],
  ],
  // endowed
  [
    'endowed as the string "yes"',
    () => fundBody({ endowed: 'yes' }),
    [{ param: 'endowed', code: 'invalid_type' }],
  ],
  ['endowed as 1', () => fundBody({ endowed: 1 }), [{ param: 'endowed', code: 'invalid_type' }]],
  ['endowed null', () => fundBody({ endowed: null }), [{ param: 'endowed', code: 'invalid_type' }]],
  // award_limit
  [
    'award_limit negative',
    () => fundBody({ award_limit: -1 }),
    [{ param: 'award_limit', code: 'out_of_range' }],
  ],
  [
    'award_limit negative with cents',
    () => fundBody({ award_limit: -0.5 }),
    [{ param: 'award_limit', code: 'out_of_range' }],
  ],
  [
    'award_limit with 3 decimal places',
    () => fundBody({ award_limit: 10.555 }),
    [{ param: 'award_limit', code: 'invalid_format' }],
  ],
  [
    'award_limit above the maximum',
    () => fundBody({ award_limit: 1_000_000_000_000 }),
    [{ param: 'award_limit', code: 'out_of_range' }],
  ],
  [
    'award_limit far above the maximum',
    () => fundBody({ award_limit: 1e21 }),
    [{ param: 'award_limit', code: 'out_of_range' }],
  ],
  [
    'award_limit as a string',
    () => fundBody({ award_limit: '100' }),
    [{ param: 'award_limit', code: 'invalid_type' }],
  ],
  // status
  [
    'status not allowed',
    () => fundBody({ status: 'open' }),
    [{ param: 'status', code: 'invalid_value' }],
  ],
  [
    'status in another letter case',
    () => fundBody({ status: 'Closed' }),
    [{ param: 'status', code: 'invalid_value' }],
  ],
  // unknown and read-only fields
  [
    'an unknown field',
    () => fundBody({ balance: 5 }),
    [{ param: 'balance', code: 'unknown_field' }],
  ],
  [
    'read-only totals',
    () => fundBody({ totals: {} }),
    [{ param: 'totals', code: 'unknown_field' }],
  ],
  ['read-only id', () => fundBody({ id: 1 }), [{ param: 'id', code: 'unknown_field' }]],
  // everything at once
  [
    'an empty body',
    () => ({}),
    [
      { param: 'code', code: 'required' },
      { param: 'name', code: 'required' },
    ],
  ],
  [
    'several problems at once',
    () => ({
      name: '',
      code: 'bad code',
      description: 'd'.repeat(2001),
      restriction: 'x',
      endowed: null,
      award_limit: 1.001,
      status: 'open',
      extra: 1,
    }),
    [
      { param: 'award_limit', code: 'invalid_format' },
      { param: 'code', code: 'invalid_format' },
      { param: 'description', code: 'too_long' },
      { param: 'endowed', code: 'invalid_type' },
      { param: 'extra', code: 'unknown_field' },
      { param: 'name', code: 'required' },
      { param: 'restriction', code: 'invalid_value' },
      { param: 'status', code: 'invalid_value' },
    ],
  ],
];

describe('POST /funds validation: the real call and both dry-run forms give the same 422', () => {
  const funds = () => service.count('funds');
  test.each(createCases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(service, '/api/v1/funds', 'POST', body, expected, funds);
  });
});

describe('POST /funds: valid edge values', () => {
  test.each([
    ['a one-character code', { code: 'A' }],
    ['a digit-only code', { code: '0' }],
    ['a 32-character code', { code: `Z${'9'.repeat(31)}` }],
    ['a code with dash and underscore', { code: 'A_B-1' }],
    ['a name of exactly 200 characters', { code: 'LONG-NAME', name: 'n'.repeat(200) }],
    [
      'a description of exactly 2000 characters',
      { code: 'LONG-DESC', description: 'd'.repeat(2000) },
    ],
    ['an award limit of 0', { code: 'ZERO-LIMIT', award_limit: 0 }],
    ['the largest award limit', { code: 'MAX-LIMIT', award_limit: 999_999_999_999.99 }],
    [
      'an explicit null award limit and description',
      { code: 'NULLS', award_limit: null, description: null },
    ],
    ['temporarily restricted', { code: 'TEMP', restriction: 'temporarily_restricted' }],
    [
      'permanently restricted and endowed',
      { code: 'PERM', restriction: 'permanently_restricted', endowed: true },
    ],
    ['created closed', { code: 'BORN-CLOSED', status: 'closed' }],
  ])('accepts %s', async (_name, body) => {
    const response = await service.call<Fund>('POST', '/api/v1/funds', { body: fundBody(body) });
    expect(response.status).toBe(201);
    for (const [field, value] of Object.entries(body)) {
      expect(response.body[field as keyof Fund]).toEqual(value);
    }
  });

  test('the same code may be used by another institution', async () => {
    const theirs = await service.call<Fund>('POST', '/api/v1/funds', {
      key: other.key,
      body: fundBody({ code: 'TAKEN' }),
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.code).toBe('TAKEN');
    expect(await service.count('funds', other.institutionId)).toBe(2);
  });

  test('two concurrent creates of one code: one is created, the other is already_in_use', async () => {
    const [first, second] = await Promise.all([
      service.call('POST', '/api/v1/funds', { body: fundBody({ code: 'RACE' }) }),
      service.call('POST', '/api/v1/funds', { body: fundBody({ code: 'RACE' }) }),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 422]);
    const loser = first.status === 422 ? first : second;
    expect(fieldErrors(loser)).toEqual([{ param: 'code', code: 'already_in_use' }]);
    const rows = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM funds WHERE code = 'RACE'`,
    );
    expect(rows).toBe(1);
  });
});

describe('fund CRUD', () => {
  test('create answers 201 with Location and the full fund with its defaults', async () => {
    const response = await service.call<Fund>('POST', '/api/v1/funds', {
      body: { name: '  General Fund ', code: ' GENERAL ' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/funds/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'fund',
      name: 'General Fund',
      code: 'GENERAL',
      description: null,
      restriction: 'unrestricted',
      endowed: false,
      award_limit: null,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(response.body.id)).toMatchObject({
      name: 'General Fund',
      code: 'GENERAL',
      description: null,
      restriction: 'unrestricted',
      endowed: false,
      award_limit: null,
      status: 'active',
    });
  });

  test('create stores every field, with the award limit exact', async () => {
    const body = {
      name: 'STEM Endowment',
      code: 'STEM-END',
      description: 'For students of science.',
      restriction: 'permanently_restricted',
      endowed: true,
      award_limit: 1_234_567.89,
      status: 'active',
    };
    const response = await service.call<Fund>('POST', '/api/v1/funds', { body });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject(body);
    expect(await fundRow(response.body.id)).toMatchObject({ ...body, award_limit: '1234567.89' });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${response.body.id}`);
    expect(fetched.body.award_limit).toBe(1_234_567.89);
  });

  test('an award limit of 100.5 comes back as the number 100.5 and is stored as 100.50', async () => {
    const fund = await createFund({ code: 'HALF', award_limit: 100.5 });
    expect(fund.award_limit).toBe(100.5);
    expect((await fundRow(fund.id))?.award_limit).toBe('100.50');
  });

  test('a dry-run create answers 201 with id 0 and the same body, without Location, a row or holding the code', async () => {
    const body = {
      name: 'Arts Fund',
      code: 'ARTS',
      restriction: 'temporarily_restricted',
      award_limit: 500.25,
    };
    const before = await service.count('funds');
    const dry = await service.call<Fund>('POST', '/api/v1/funds?dry_run=true', { body });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(dry.body.created_at).toMatch(ISO_MS);
    expect(await service.count('funds')).toBe(before);

    const real = await service.call<Fund>('POST', '/api/v1/funds', { body });
    expect(real.status).toBe(201);
    const strip = (fund: Fund) => ({
      ...fund,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
    expect(Object.keys(dry.body).sort()).toEqual(Object.keys(real.body).sort());

    const dryAgain = await service.call('POST', '/api/v1/funds', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dryAgain.status).toBe(422);
    expect(fieldErrors(dryAgain)).toEqual([{ param: 'code', code: 'already_in_use' }]);
  });

  test('retrieve returns the fund as created', async () => {
    const fund = await createFund({ code: 'READ-ME', description: 'Readable' });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${fund.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject(fund);
  });

  test('retrieve reports totals: gifts received, awards committed and capacity left', async () => {
    const fund = await createFund({ code: 'TOTALS', award_limit: 1000 });
    for (const amount of [10.25, 20.25]) {
      const gift = await service.call('POST', '/api/v1/gifts', {
        body: {
          donor_id: ids.donor,
          amount,
          subject: 'For totals',
          gift_date: '2026-06-01',
          fund_id: fund.id,
        },
      });
      expect(gift.status).toBe(201);
    }
    const fetched = await service.call<Fund & { totals: unknown }>(
      'GET',
      `/api/v1/funds/${fund.id}`,
    );
    expect(fetched.body.totals).toEqual({
      gifts_received: 30.5,
      awards_committed: 0,
      award_capacity_remaining: 1000,
    });
  });

  test('PATCH merges the sent fields into the stored fund', async () => {
    const fund = await createFund({
      code: 'MERGE',
      description: 'Before',
      award_limit: 300,
      endowed: true,
    });
    const patched = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { description: 'After', restriction: 'temporarily_restricted' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...fund,
      description: 'After',
      restriction: 'temporarily_restricted',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(fund.id)).toMatchObject({
      code: 'MERGE',
      description: 'After',
      restriction: 'temporarily_restricted',
      endowed: true,
      award_limit: '300.00',
    });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${fund.id}`);
    expect(fetched.body).toMatchObject(patched.body);
  });

  test('PATCH may resend the fund’s own code, change it to a free one, and clear the limit and description', async () => {
    const fund = await createFund({ code: 'RENAME-ME', description: 'Text', award_limit: 50 });
    const same = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { code: 'RENAME-ME' },
    });
    expect(same.status).toBe(200);
    const renamed = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { code: 'RENAMED', award_limit: null, description: '' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ code: 'RENAMED', award_limit: null, description: null });
    expect(await fundRow(fund.id)).toMatchObject({
      code: 'RENAMED',
      award_limit: null,
      description: null,
    });
    // The old code is free again.
    await createFund({ code: 'RENAME-ME' });
  });

  test('a dry-run PATCH returns the would-be fund and changes nothing', async () => {
    const fund = await createFund({ code: 'DRY-PATCH', award_limit: 10 });
    const rowBefore = await fundRow(fund.id);
    const dry = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { name: 'Preview', award_limit: 20.5, status: 'closed' },
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...fund,
      name: 'Preview',
      award_limit: 20.5,
      status: 'closed',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(fund.id)).toEqual(rowBefore);
    const gift = await service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount: 1,
        subject: 'Still open',
        gift_date: '2026-01-02',
        fund_id: fund.id,
      },
    });
    expect(gift.status).toBe(201);
  });

  test('closing a fund via PATCH refuses new gifts on it (reference_inactive); reopening accepts them again', async () => {
    const fund = await createFund({ code: 'CLOSE-ME' });
    const giftBody = {
      donor_id: ids.donor,
      amount: 15,
      subject: 'Late gift',
      gift_date: '2026-07-01',
      fund_id: fund.id,
    };
    const closed = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    expect(closed.body.status).toBe('closed');
    expect((await fundRow(fund.id))?.status).toBe('closed');

    const gifts = () => service.count('gifts');
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      () => giftBody,
      [{ param: 'fund_id', code: 'reference_inactive' }],
      gifts,
    );

    const reopened = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'active' },
    });
    expect(reopened.status).toBe(200);
    const gift = await service.call('POST', '/api/v1/gifts', { body: giftBody });
    expect(gift.status).toBe(201);
  });

  test('funds have no DELETE: 405 with an Allow header, and the fund stays', async () => {
    const fund = await createFund({ code: 'KEEP-ME' });
    const response = await service.call<ErrorEnvelope>('DELETE', `/api/v1/funds/${fund.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'method_not_allowed',
    });
    expect(response.body.error.request_id).toBe(response.headers.get('Request-Id'));
    expect(await fundRow(fund.id)).not.toBeNull();

    const dry = await service.call<ErrorEnvelope>(
      'DELETE',
      `/api/v1/funds/${fund.id}?dry_run=true`,
    );
    expect(dry.status).toBe(405);
    expect(dry.headers.get('Allow')).toBe('GET, PATCH');

    const collection = await service.call<ErrorEnvelope>('DELETE', '/api/v1/funds');
    expect(collection.status).toBe(405);
    expect(collection.body.error.code).toBe('method_not_allowed');
  });
});

describe('PATCH /funds/{id} validation: the real call and the dry run give the same 422, and nothing changes', () => {
  let target: Fund;
  beforeAll(async () => {
    target = await createFund({ code: 'PATCH-TARGET', award_limit: 75 });
  });

  const patchCases: Case[] = [
    ["another fund's code", () => ({ code: 'TAKEN' }), [{ param: 'code', code: 'already_in_use' }]],
    [
      'a lower-case code',
      () => ({ code: 'patch-target' }),
      [{ param: 'code', code: 'invalid_format' }],
    ],
    ['name cleared', () => ({ name: null }), [{ param: 'name', code: 'required' }]],
    ['code cleared', () => ({ code: '' }), [{ param: 'code', code: 'required' }]],
    [
      'a negative award limit',
      () => ({ award_limit: -10 }),
      [{ param: 'award_limit', code: 'out_of_range' }],
    ],
    [
      'status not allowed',
      () => ({ status: 'archived' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'read-only created_at',
      () => ({ created_at: '2026-01-01T00:00:00.000Z' }),
      [{ param: 'created_at', code: 'unknown_field' }],
    ],
    [
      'several problems at once',
      () => ({ name: ' ', code: 'TAKEN', endowed: null, object: 'fund' }),
      [
        { param: 'code', code: 'already_in_use' },
        { param: 'endowed', code: 'invalid_type' },
        { param: 'name', code: 'required' },
        { param: 'object', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(patchCases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      `/api/v1/funds/${target.id}`,
      'PATCH',
      body,
      expected,
      () => fundRow(target.id),
    );
  });
});

describe('a fund that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ['a negative id', () => '-1'],
    ["another institution's fund", () => String(ids.otherFund)],
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
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/funds/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's fund is untouched, and cannot be used for a gift", async () => {
    expect(await fundRow(ids.otherFund)).toMatchObject({ name: 'Their fund', code: 'THEIRS' });
    const gift = await service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount: 3,
        subject: 'Wrong fund',
        gift_date: '2026-01-03',
        fund_id: ids.otherFund,
      },
    });
    expect(gift.status).toBe(422);
    expect(fieldErrors(gift)).toEqual([{ param: 'fund_id', code: 'reference_not_found' }]);
  });
});
