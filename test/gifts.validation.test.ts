// Gift creates and updates that fail validation: the same 422 for the real call and its dry runs.
import { expectSameFailureThreeWays } from './helpers/threeWays.js';
import { created } from './helpers/responses.js';
import {
  giftBody,
  giftRow,
  ids,
  service,
  setUpGiftTests,
  type Case,
  type Gift,
} from './helpers/gifts.js';

setUpGiftTests();

const createCases: Case[] = [
  // donor_id
  [
    'donor_id missing',
    () => giftBody({ donor_id: undefined }),
    [{ param: 'donor_id', code: 'required' }],
  ],
  ['donor_id null', () => giftBody({ donor_id: null }), [{ param: 'donor_id', code: 'required' }]],
  [
    'donor_id of no donor',
    () => giftBody({ donor_id: 987654 }),
    [{ param: 'donor_id', code: 'reference_not_found' }],
  ],
  [
    "donor_id of another institution's donor",
    () => giftBody({ donor_id: ids.otherDonor }),
    [{ param: 'donor_id', code: 'reference_not_found' }],
  ],
  [
    'donor_id as a string',
    () => giftBody({ donor_id: String(ids.donor) }),
    [{ param: 'donor_id', code: 'invalid_type' }],
  ],
  // amount
  [
    'amount missing',
    () => giftBody({ amount: undefined }),
    [{ param: 'amount', code: 'required' }],
  ],
  ['amount null', () => giftBody({ amount: null }), [{ param: 'amount', code: 'required' }]],
  [
    'amount as a string',
    () => giftBody({ amount: '10.00' }),
    [{ param: 'amount', code: 'invalid_type' }],
  ],
  ['amount 0', () => giftBody({ amount: 0 }), [{ param: 'amount', code: 'out_of_range' }]],
  ['amount negative', () => giftBody({ amount: -5 }), [{ param: 'amount', code: 'out_of_range' }]],
  [
    'amount negative with cents',
    () => giftBody({ amount: -0.01 }),
    [{ param: 'amount', code: 'out_of_range' }],
  ],
  [
    'amount with 3 decimal places',
    () => giftBody({ amount: 100.555 }),
    [{ param: 'amount', code: 'invalid_format' }],
  ],
  [
    'amount of a tenth of a cent',
    () => giftBody({ amount: 0.001 }),
    [{ param: 'amount', code: 'invalid_format' }],
  ],
  [
    'amount above the maximum',
    () => giftBody({ amount: 1_000_000_000_000 }),
    [{ param: 'amount', code: 'out_of_range' }],
  ],
  // currency
  [
    'currency not ISO 4217',
    () => giftBody({ currency: 'XYZ' }),
    [{ param: 'currency', code: 'invalid_value' }],
  ],
  [
    'currency in lower case',
    () => giftBody({ currency: 'usd' }),
    [{ param: 'currency', code: 'invalid_value' }],
  ],
  [
    'currency empty',
    () => giftBody({ currency: '' }),
    [{ param: 'currency', code: 'invalid_value' }],
  ],
  [
    'currency as a number',
    () => giftBody({ currency: 840 }),
    [{ param: 'currency', code: 'invalid_type' }],
  ],
  // subject
  [
    'subject missing',
    () => giftBody({ subject: undefined }),
    [{ param: 'subject', code: 'required' }],
  ],
  ['subject empty', () => giftBody({ subject: '' }), [{ param: 'subject', code: 'required' }]],
  [
    'subject blank after trimming',
    () => giftBody({ subject: '   \t ' }),
    [{ param: 'subject', code: 'required' }],
  ],
  [
    'subject of 201 characters',
    () => giftBody({ subject: 'x'.repeat(201) }),
    [{ param: 'subject', code: 'too_long' }],
  ],
  // gift_date
  [
    'gift_date missing',
    () => giftBody({ gift_date: undefined }),
    [{ param: 'gift_date', code: 'required' }],
  ],
  [
    'gift_date 2026-02-30',
    () => giftBody({ gift_date: '2026-02-30' }),
    [{ param: 'gift_date', code: 'invalid_format' }],
  ],
  [
    'gift_date 2025-02-29 (not a leap year)',
    () => giftBody({ gift_date: '2025-02-29' }),
    [{ param: 'gift_date', code: 'invalid_format' }],
  ],
  [
    'gift_date 2026-13-01',
    () => giftBody({ gift_date: '2026-13-01' }),
    [{ param: 'gift_date', code: 'invalid_format' }],
  ],
  [
    'gift_date 2026-1-5',
    () => giftBody({ gift_date: '2026-1-5' }),
    [{ param: 'gift_date', code: 'invalid_format' }],
  ],
  [
    'gift_date with a time',
    () => giftBody({ gift_date: '2026-01-05T00:00:00Z' }),
    [{ param: 'gift_date', code: 'invalid_format' }],
  ],
  [
    'gift_date as a number',
    () => giftBody({ gift_date: 20260105 }),
    [{ param: 'gift_date', code: 'invalid_type' }],
  ],
  // type and check_number
  [
    'type not allowed',
    () => giftBody({ type: 'wire' }),
    [{ param: 'type', code: 'invalid_value' }],
  ],
  [
    'type in another letter case',
    () => giftBody({ type: 'Cash' }),
    [{ param: 'type', code: 'invalid_value' }],
  ],
  [
    'check_number on a cash gift',
    () => giftBody({ type: 'cash', check_number: '1001' }),
    [{ param: 'check_number', code: 'not_allowed' }],
  ],
  [
    'check_number without a type (cash by default)',
    () => giftBody({ check_number: '1001' }),
    [{ param: 'check_number', code: 'not_allowed' }],
  ],
  [
    'check_number on a credit card gift',
    () => giftBody({ type: 'credit_card', check_number: '1001' }),
    [{ param: 'check_number', code: 'not_allowed' }],
  ],
  [
    'check_number of 41 characters',
    () => giftBody({ type: 'check', check_number: '9'.repeat(41) }),
    [{ param: 'check_number', code: 'too_long' }],
  ],
  // fund_id
  [
    'fund_id of no fund',
    () => giftBody({ fund_id: 987654 }),
    [{ param: 'fund_id', code: 'reference_not_found' }],
  ],
  [
    "fund_id of another institution's fund",
    () => giftBody({ fund_id: ids.otherFund }),
    [{ param: 'fund_id', code: 'reference_not_found' }],
  ],
  [
    'fund_id of a closed fund',
    () => giftBody({ fund_id: ids.closedFund }),
    [{ param: 'fund_id', code: 'reference_inactive' }],
  ],
  // unknown and read-only fields
  ['an unknown field', () => giftBody({ memo: 'hi' }), [{ param: 'memo', code: 'unknown_field' }]],
  ['read-only id', () => giftBody({ id: 5 }), [{ param: 'id', code: 'unknown_field' }]],
  [
    'read-only object',
    () => giftBody({ object: 'gift' }),
    [{ param: 'object', code: 'unknown_field' }],
  ],
  [
    'read-only created_at',
    () => giftBody({ created_at: '2026-01-01T00:00:00.000Z' }),
    [{ param: 'created_at', code: 'unknown_field' }],
  ],
  // everything at once
  [
    'an empty body',
    () => ({}),
    [
      { param: 'amount', code: 'required' },
      { param: 'donor_id', code: 'required' },
      { param: 'gift_date', code: 'required' },
      { param: 'subject', code: 'required' },
    ],
  ],
  [
    'several problems at once',
    () => ({
      donor_id: ids.otherDonor,
      amount: 100.555,
      subject: ' ',
      gift_date: '2026-02-30',
      type: 'wire',
      currency: 'XYZ',
      fund_id: ids.closedFund,
      memo: 'x',
    }),
    [
      { param: 'amount', code: 'invalid_format' },
      { param: 'currency', code: 'invalid_value' },
      { param: 'donor_id', code: 'reference_not_found' },
      { param: 'fund_id', code: 'reference_inactive' },
      { param: 'gift_date', code: 'invalid_format' },
      { param: 'memo', code: 'unknown_field' },
      { param: 'subject', code: 'required' },
      { param: 'type', code: 'invalid_value' },
    ],
  ],
  [
    'check_number not allowed together with other problems',
    () => giftBody({ amount: 0, check_number: '77', subject: 'y'.repeat(201) }),
    [
      { param: 'amount', code: 'out_of_range' },
      { param: 'check_number', code: 'not_allowed' },
      { param: 'subject', code: 'too_long' },
    ],
  ],
];

describe('POST /gifts validation: the real call and both dry-run forms give the same 422', () => {
  const gifts = () => service.count('gifts');
  test.each(createCases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(service, '/api/v1/gifts', 'POST', body, expected, gifts);
  });
});

describe('PATCH /gifts/{id} validation: the real call and the dry run give the same 422, and nothing changes', () => {
  let target: Gift;
  beforeAll(async () => {
    target = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ type: 'check', check_number: '1001', amount: 60 }),
      }),
    );
  });

  const patchCases: Case[] = [
    [
      'type changed away from check',
      () => ({ type: 'cash' }),
      [{ param: 'check_number', code: 'not_allowed' }],
    ],
    ['amount 0', () => ({ amount: 0 }), [{ param: 'amount', code: 'out_of_range' }]],
    [
      'amount with 3 decimal places',
      () => ({ amount: 1.234 }),
      [{ param: 'amount', code: 'invalid_format' }],
    ],
    ['subject blank', () => ({ subject: '  ' }), [{ param: 'subject', code: 'required' }]],
    ['donor_id cleared', () => ({ donor_id: null }), [{ param: 'donor_id', code: 'required' }]],
    [
      "another institution's donor",
      () => ({ donor_id: ids.otherDonor }),
      [{ param: 'donor_id', code: 'reference_not_found' }],
    ],
    [
      'a closed fund',
      () => ({ fund_id: ids.closedFund }),
      [{ param: 'fund_id', code: 'reference_inactive' }],
    ],
    [
      'gift_date not a real date',
      () => ({ gift_date: '2026-02-30' }),
      [{ param: 'gift_date', code: 'invalid_format' }],
    ],
    [
      'a read-only field',
      () => ({ updated_at: '2026-01-01T00:00:00.000Z' }),
      [{ param: 'updated_at', code: 'unknown_field' }],
    ],
  ];

  test.each(patchCases)('%s', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      `/api/v1/gifts/${target.id}`,
      'PATCH',
      body,
      expected,
      () => giftRow(target.id),
    );
  });
});
