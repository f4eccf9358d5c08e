// Gift values: accepted edge values, the currency default and exact money.
import { created } from './helpers/responses.js';
import {
  createDonor,
  giftBody,
  giftRow,
  service,
  setUpGiftTests,
  type Gift,
} from './helpers/gifts.js';

interface Giving {
  total_amount: number;
  gift_count: number;
  first_gift_date: string | null;
  last_gift_date: string | null;
}

setUpGiftTests();

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

  test('keeps an explicit currency other than the default, at the rate sent', async () => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody({ currency: 'GBP', exchange_rate: 1.27 }),
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      currency: 'GBP',
      exchange_rate: 1.27,
      base_amount: 31.75,
    });
    expect((await giftRow(response.body.id))?.currency).toBe('GBP');
  });

  test('a PATCH that does not send currency keeps the stored one', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ currency: 'JPY', exchange_rate: 0.0067 }),
      }),
    );
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Renamed' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      currency: 'JPY',
      exchange_rate: 0.0067,
      base_amount: 0.17,
    });
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
      soft_credit_total: 0,
      soft_credit_count: 0,
      pledged_outstanding: 0,
    });
  });
});
