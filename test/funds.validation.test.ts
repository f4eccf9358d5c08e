// Fund bodies refused three ways with nothing written, and the edge values that are accepted.
import { sql } from 'slonik';
import { expectSameFailureThreeWays, fieldErrors } from './helpers/threeWays.js';
import {
  createFund,
  fundBody,
  fundRow,
  other,
  service,
  setUpFundTests,
  type Case,
  type Fund,
} from './helpers/funds.js';

setUpFundTests();

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
