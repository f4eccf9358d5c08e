import { sql } from 'slonik';
import {
  expectSameFailureThreeWays,
  fieldErrors,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Gift {
  id: number;
  object: string;
  donor_id: number;
  amount: number;
  currency: string;
  subject: string;
  gift_date: string;
  type: string;
  check_number: string | null;
  fund_id: number | null;
  created_at: string;
  updated_at: string;
}

interface Giving {
  total_amount: number;
  gift_count: number;
  first_gift_date: string | null;
  last_gift_date: string | null;
}

let service: TestService;
let other: Tenant;
/** Ids created in beforeAll that the case tables refer to. */
const ids = {
  donor: 0,
  fund: 0,
  closedFund: 0,
  otherDonor: 0,
  otherFund: 0,
  otherGift: 0,
};

const createDonor = (email: string, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace', email },
    }),
  );

const createFund = (code: string, extra: Record<string, unknown> = {}, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/funds', { key, body: { name: `Fund ${code}`, code, ...extra } }),
  );

/** A valid gift body for the main tenant; overrides win, and an `undefined` override drops the field. */
const giftBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  donor_id: ids.donor,
  amount: 25,
  subject: 'Annual fund',
  gift_date: '2026-03-15',
  ...overrides,
});

/** A gift as stored, money and date as the database's own text. */
interface StoredGift {
  donor_id: number;
  amount: string;
  currency: string;
  subject: string;
  gift_date: string;
  type: string;
  check_number: string | null;
  fund_id: number | null;
  updated_at: string;
}

async function giftRow(id: number): Promise<StoredGift | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT donor_id, amount::text AS amount, currency, subject, gift_date::text AS gift_date, type,
           check_number, fund_id, updated_at
    FROM gifts WHERE id = ${id}`);
  return row as StoredGift | null;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  ids.donor = (await createDonor('ada@example.org')).id;
  ids.fund = (await createFund('GENERAL')).id;
  ids.closedFund = (await createFund('OLD-FUND', { status: 'closed' })).id;
  ids.otherDonor = (await createDonor('ada@example.org', other.key)).id;
  ids.otherFund = (await createFund('GENERAL', {}, other.key)).id;
  ids.otherGift = (
    await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        key: other.key,
        body: { donor_id: ids.otherDonor, amount: 5, subject: 'Theirs', gift_date: '2026-01-01' },
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

describe('POST /gifts: valid edge values', () => {
  test.each([
    ['the smallest amount', { amount: 0.01 }],
    ['the largest amount', { amount: 999_999_999_999.99 }],
    ['a whole amount', { amount: 7 }],
    ['a leap day', { gift_date: '2024-02-29' }],
    ['a subject of exactly 200 characters', { subject: 's'.repeat(200) }],
    ['a check number of exactly 40 characters', { type: 'check', check_number: '4'.repeat(40) }],
    ['an explicit null fund and check number', { fund_id: null, check_number: null }],
    ['a type other than the default', { type: 'in_kind' }],
  ])('accepts %s', async (_name, overrides) => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody(overrides),
    });
    expect(response.status).toBe(201);
    for (const [field, value] of Object.entries(overrides)) {
      expect(response.body[field as keyof Gift]).toEqual(value);
    }
  });

  test.each([
    'cash',
    'check',
    'credit_card',
    'bank_transfer',
    'stock',
    'in_kind',
    'pledge',
    'other',
  ])('accepts type %s', async (type) => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts?dry_run=true', {
      body: giftBody({ type }),
    });
    expect(response.status).toBe(201);
    expect(response.body.type).toBe(type);
  });

  test.each(['2024-02-29', '1999-12-31', '2026-01-01', '2000-02-29'])(
    'returns gift_date %s exactly as sent, and stores that date',
    async (giftDate) => {
      const create = await service.call<Gift>('POST', '/api/v1/gifts', {
        body: giftBody({ gift_date: giftDate }),
      });
      expect(create.status).toBe(201);
      expect(create.body.gift_date).toBe(giftDate);
      const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${create.body.id}`);
      expect(fetched.body.gift_date).toBe(giftDate);
      expect((await giftRow(create.body.id))?.gift_date).toBe(giftDate);
    },
  );

  test('trims the subject and check number', async () => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody({ subject: '  Spring appeal \n', type: 'check', check_number: ' 1001 ' }),
    });
    expect(response.status).toBe(201);
    expect(response.body.subject).toBe('Spring appeal');
    expect(response.body.check_number).toBe('1001');
    expect(await giftRow(response.body.id)).toMatchObject({
      subject: 'Spring appeal',
      check_number: '1001',
    });
  });
});

describe('currency', () => {
  test("defaults to the institution's currency", async () => {
    const euro = await service.createTenant('Euro College', 'EUR');
    const donor = await createDonor('euro@example.org', euro.key);
    const body = { donor_id: donor.id, amount: 10, subject: 'Bursary', gift_date: '2026-02-01' };

    const dry = await service.call<Gift>('POST', '/api/v1/gifts?dry_run=true', {
      key: euro.key,
      body,
    });
    expect(dry.status).toBe(201);
    expect(dry.body.currency).toBe('EUR');

    const real = await service.call<Gift>('POST', '/api/v1/gifts', { key: euro.key, body });
    expect(real.status).toBe(201);
    expect(real.body.currency).toBe('EUR');
    expect((await giftRow(real.body.id))?.currency).toBe('EUR');

    const main = await service.call<Gift>('POST', '/api/v1/gifts', { body: giftBody() });
    expect(main.body.currency).toBe('USD');
  });

  test('keeps an explicit currency other than the default', async () => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody({ currency: 'GBP' }),
    });
    expect(response.status).toBe(201);
    expect(response.body.currency).toBe('GBP');
    expect((await giftRow(response.body.id))?.currency).toBe('GBP');
  });

  test('a PATCH that does not send currency keeps the stored one', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ currency: 'JPY' }) }),
    );
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Renamed' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.currency).toBe('JPY');
  });
});

describe('money is exact', () => {
  test.each([
    [0.01, '0.01'],
    [19.99, '19.99'],
    [100.5, '100.50'],
    [999_999_999_999.99, '999999999999.99'],
    [1_234_567.89, '1234567.89'],
    [0.3, '0.30'],
  ])(
    'amount %p comes back unchanged from create, dry run, retrieve and replay, stored as %s',
    async (amount, stored) => {
      const key = `money-${stored}`;
      const body = giftBody({ amount });
      const dry = await service.call<Gift>('POST', '/api/v1/gifts?dry_run=true', { body });
      expect(dry.body.amount).toBe(amount);

      const create = await service.call<Gift>('POST', '/api/v1/gifts', {
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(create.status).toBe(201);
      expect(create.body.amount).toBe(amount);

      const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${create.body.id}`);
      expect(fetched.body.amount).toBe(amount);

      const replay = await service.call<Gift>('POST', '/api/v1/gifts', {
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(replay.body).toEqual(create.body);

      expect((await giftRow(create.body.id))?.amount).toBe(stored);
    },
  );

  test('an amount changed by PATCH is stored and returned exactly', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ amount: 1 }) }),
    );
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { amount: 4567.1 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.amount).toBe(4567.1);
    expect((await giftRow(gift.id))?.amount).toBe('4567.10');
  });

  test("a donor's giving total of many small gifts is exact", async () => {
    const donor = await createDonor('tenths@example.org');
    const amounts = [...Array<number>(20).fill(0.1), ...Array<number>(10).fill(0.2)];
    const responses = await Promise.all(
      amounts.map((amount, index) =>
        service.call('POST', '/api/v1/gifts', {
          body: {
            donor_id: donor.id,
            amount,
            subject: `Gift ${index}`,
            gift_date: `2026-04-${String(index + 1).padStart(2, '0')}`,
          },
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(amounts.map(() => 201));
    // In floating point these add up to 4.000000000000002; the service must say 4.
    expect(amounts.reduce((sum, amount) => sum + amount, 0)).not.toBe(4);

    const fetched = await service.call<{ giving: Giving }>('GET', `/api/v1/donors/${donor.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.giving).toEqual({
      total_amount: 4,
      gift_count: 30,
      first_gift_date: '2026-04-01',
      last_gift_date: '2026-04-30',
    });
  });
});

describe('gift CRUD', () => {
  test('create answers 201 with Location and the full gift, and writes the row', async () => {
    const before = Date.now();
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody({
        amount: 250.75,
        type: 'check',
        check_number: '1001',
        fund_id: ids.fund,
        subject: 'Gala',
      }),
    });
    expect(response.status).toBe(201);
    const gift = response.body;
    expect(response.headers.get('Location')).toBe(`/api/v1/gifts/${gift.id}`);
    expect(gift).toEqual({
      id: expect.any(Number),
      object: 'gift',
      donor_id: ids.donor,
      amount: 250.75,
      currency: 'USD',
      subject: 'Gala',
      gift_date: '2026-03-15',
      type: 'check',
      check_number: '1001',
      fund_id: ids.fund,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(gift.id).toBeGreaterThan(0);
    expect(Date.parse(gift.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(await giftRow(gift.id)).toMatchObject({
      donor_id: ids.donor,
      amount: '250.75',
      currency: 'USD',
      subject: 'Gala',
      gift_date: '2026-03-15',
      type: 'check',
      check_number: '1001',
      fund_id: ids.fund,
    });
  });

  test('create fills the defaults: cash, no check number, no fund', async () => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', { body: giftBody() });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      type: 'cash',
      check_number: null,
      fund_id: null,
      currency: 'USD',
    });
  });

  test('a dry-run create answers 201 with id 0 and the same body, without Location or a row', async () => {
    const body = giftBody({ amount: 88.8, type: 'check', check_number: 'A-7', fund_id: ids.fund });
    const before = await service.count('gifts');
    const startedAt = Date.now();
    const dry = await service.call<Gift>('POST', '/api/v1/gifts', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(dry.body.created_at).toMatch(ISO_MS);
    expect(Date.parse(dry.body.created_at)).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(await service.count('gifts')).toBe(before);

    const real = await service.call<Gift>('POST', '/api/v1/gifts', { body });
    expect(real.status).toBe(201);
    const strip = (gift: Gift) => ({
      ...gift,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
    expect(Object.keys(dry.body).sort()).toEqual(Object.keys(real.body).sort());
  });

  test('retrieve returns the gift as created', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ fund_id: ids.fund }) }),
    );
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(gift);
  });

  test('PATCH merges the sent fields into the stored gift', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ type: 'check', check_number: '500', fund_id: ids.fund, amount: 40 }),
      }),
    );
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: '  Updated subject ', gift_date: '2026-05-01' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...gift,
      subject: 'Updated subject',
      gift_date: '2026-05-01',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(gift.updated_at));
    expect(await giftRow(gift.id)).toMatchObject({
      subject: 'Updated subject',
      gift_date: '2026-05-01',
      type: 'check',
      check_number: '500',
      amount: '40.00',
      fund_id: ids.fund,
    });
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.body).toEqual(patched.body);
  });

  test('PATCH revalidates the merged gift: a check number must go when the type stops being check', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ type: 'check', check_number: '1234' }),
      }),
    );
    const refused = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { type: 'cash' },
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused)).toEqual([{ param: 'check_number', code: 'not_allowed' }]);
    expect(await giftRow(gift.id)).toMatchObject({ type: 'check', check_number: '1234' });

    const fixed = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { type: 'cash', check_number: null },
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ type: 'cash', check_number: null });
    expect(await giftRow(gift.id)).toMatchObject({ type: 'cash', check_number: null });

    const addBack = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { check_number: '99' },
    });
    expect(addBack.status).toBe(422);
    expect(fieldErrors(addBack)).toEqual([{ param: 'check_number', code: 'not_allowed' }]);
  });

  test('PATCH can move a gift to another donor and fund of the institution', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const donor = await createDonor('mover@example.org');
    const fund = await createFund('MOVE-TO');
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { donor_id: donor.id, fund_id: fund.id },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ donor_id: donor.id, fund_id: fund.id });
    const cleared = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { fund_id: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.fund_id).toBeNull();
    expect(await giftRow(gift.id)).toMatchObject({ donor_id: donor.id, fund_id: null });
  });

  test('a gift on a fund that was closed later can still be edited without naming the fund', async () => {
    const fund = await createFund('CLOSING-LATER');
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ fund_id: fund.id }) }),
    );
    const closed = await service.call('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Still fine' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ subject: 'Still fine', fund_id: fund.id });
  });

  test('a dry-run PATCH returns the would-be gift and changes nothing', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ amount: 10 }) }),
    );
    const rowBefore = await giftRow(gift.id);
    const dry = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}?dry_run=true`, {
      body: { amount: 12.34, subject: 'Preview' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...gift,
      amount: 12.34,
      subject: 'Preview',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await giftRow(gift.id)).toEqual(rowBefore);
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.body).toEqual(gift);
  });

  test('DELETE answers the deletion object and removes the row', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const response = await service.call('DELETE', `/api/v1/gifts/${gift.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: gift.id, object: 'gift', deleted: true });
    expect(await giftRow(gift.id)).toBeNull();
    expect((await service.call('GET', `/api/v1/gifts/${gift.id}`)).status).toBe(404);
    const again = await service.call<ErrorEnvelope>('DELETE', `/api/v1/gifts/${gift.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('resource_not_found');
  });

  test('a dry-run DELETE answers the same deletion object and keeps the row', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const ways: Array<{ path: string; headers: Record<string, string> }> = [
      { path: '?dry_run=true', headers: {} },
      { path: '', headers: { 'Dry-Run': 'TRUE' } },
    ];
    for (const options of ways) {
      const response = await service.call('DELETE', `/api/v1/gifts/${gift.id}${options.path}`, {
        headers: options.headers,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: gift.id, object: 'gift', deleted: true });
    }
    expect(await giftRow(gift.id)).not.toBeNull();
    expect((await service.call('GET', `/api/v1/gifts/${gift.id}`)).status).toBe(200);
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

describe('a gift that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ['a fractional id', () => '1.5'],
    ["another institution's gift", () => String(ids.otherGift)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { subject: 'Hijack' }],
    ['PATCH', '?dry_run=true', { subject: 'Hijack' }],
    ['DELETE', '', undefined],
    ['DELETE', '?dry_run=true', undefined],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/gifts/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's gift is untouched by those attempts", async () => {
    expect(await giftRow(ids.otherGift)).toMatchObject({ subject: 'Theirs', amount: '5.00' });
    const theirs = await service.call<Gift>('GET', `/api/v1/gifts/${ids.otherGift}`, {
      key: other.key,
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body.subject).toBe('Theirs');
  });
});
