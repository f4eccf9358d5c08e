// More than one currency (fundraising.md §2), from outside: the rate a gift, pledge or recurring
// gift takes, its base amount, the base amounts of its parts and refunds, and the totals that sum
// them, each answer checked against what the database holds afterwards. Each block uses its own
// currency, so that the rates one block adds never decide another's lookups.
import { sql } from 'slonik';
import { sumCents } from '../common/money.js';
import {
  allGiftMoney,
  createRate,
  issueReceipt,
  storedGiftMoney,
  storedPledgeMoney,
  storedRecurringMoney,
  storedRefunds,
} from './helpers/currencies.js';
import {
  createDonor,
  createFund,
  giftBody,
  ids,
  other,
  service,
  setUpGiftTests,
  type Gift,
} from './helpers/gifts.js';
import { created } from './helpers/responses.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpGiftTests();

interface Refund {
  id: number;
  amount: number;
  base_amount: number | null;
  designations: { fund_id: number; amount: number; base_amount: number | null }[];
}

interface Giving {
  total_amount: number;
  gift_count: number;
  soft_credit_total: number;
  pledged_outstanding: number;
}

interface Pledge {
  id: number;
  currency: string;
  exchange_rate: number;
  amount: number;
  base_amount: number;
  amount_paid: number;
  balance: number;
  base_amount_paid: number;
  base_balance: number;
  status: string;
}

interface RecurringGift {
  id: number;
  currency: string;
  exchange_rate: number | null;
  base_amount: number | null;
  total_given: number;
  gift_count: number;
}

const postGift = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.call<Gift>('POST', '/api/v1/gifts', { body: giftBody(body), headers });
const createGift = (body: Record<string, unknown>) => created<Gift>(postGift(body));
const patchGift = (id: number, body: Record<string, unknown>) =>
  service.call<Gift>('PATCH', `/api/v1/gifts/${id}`, { body });
const getGift = async (id: number) => (await service.call<Gift>('GET', `/api/v1/gifts/${id}`)).body;
const refund = (giftId: number, body: Record<string, unknown>) =>
  created<Refund>(
    service.call('POST', `/api/v1/gifts/${giftId}/refunds`, {
      body: { refund_date: '2026-04-01', ...body },
    }),
  );
const giving = async (donorId: number) =>
  (await service.call<{ giving: Giving }>('GET', `/api/v1/donors/${donorId}`)).body.giving;
const fundTotals = async (fundId: number) =>
  (
    await service.call<{ totals: { gifts_received: number; pledged_outstanding: number } }>(
      'GET',
      `/api/v1/funds/${fundId}`,
    )
  ).body.totals;
/** The fields a dry run cannot know: the id and the timestamps of the row it did not write. */
const unsaved = <T extends object>(body: T) => ({
  ...body,
  id: 0,
  created_at: null,
  updated_at: null,
});

let code = 0;
const newFund = async () => (await createFund(`CUR-${++code}`)).id;
const newDonor = async () => (await createDonor(`donor${++code}@example.org`)).id;

describe('the rate a gift takes, and its base amount', () => {
  beforeAll(async () => {
    await createRate('CHF', 0.9, '2026-01-01');
    await createRate('CHF', 1.1, '2026-02-01');
    await createRate('CHF', 1.2, '2026-04-01');
    // Another institution's rate is none of this one's: it fills no gap below.
    await created(
      service.call('POST', '/api/v1/exchange-rates', {
        key: other.key,
        body: { currency: 'CHF', rate: 5, effective_on: '2025-01-01' },
      }),
    );
  });

  test.each([
    ['2026-01-15', 0.9, 90],
    ['2026-02-01', 1.1, 110],
    ['2026-03-31', 1.1, 110],
    ['2026-04-01', 1.2, 120],
  ])(
    'a gift in CHF dated %s takes the latest rate on or before its date (%d)',
    async (date, rate, base) => {
      const fund = await newFund();
      const gift = await createGift({
        amount: 100,
        currency: 'CHF',
        gift_date: date,
        fund_id: fund,
      });
      expect(gift).toMatchObject({
        currency: 'CHF',
        amount: 100,
        exchange_rate: rate,
        base_amount: base,
        designations: [{ fund_id: fund, amount: 100, amount_refunded: 0, base_amount: base }],
      });
      expect(await storedGiftMoney(gift.id)).toEqual({
        currency: 'CHF',
        amount: '100.00',
        exchange_rate: rate.toFixed(6),
        base_amount: base.toFixed(2),
        base_amount_refunded: '0.00',
        designations: [
          {
            fund_id: fund,
            amount: 100,
            amount_refunded: 0,
            base_amount: base,
            base_amount_refunded: 0,
          },
        ],
        soft_credits: [],
      });
      expect(await getGift(gift.id)).toEqual(gift);
    },
  );

  test('the rate sent wins over the one in effect, and is stored as sent', async () => {
    const gift = await createGift({ amount: 100, currency: 'CHF', exchange_rate: 1.234567 });
    expect([gift.exchange_rate, gift.base_amount]).toEqual([1.234567, 123.46]);
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      exchange_rate: '1.234567',
      base_amount: '123.46',
    });
  });

  test('no rate on or before the date: 422 exchange_rate_missing on currency, nothing written', async () => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      giftBody({ amount: 100, currency: 'CHF', gift_date: '2025-12-31' }),
      [{ param: 'currency', code: 'exchange_rate_missing' }],
      allGiftMoney,
    );
    // A currency with no rate at all is the same answer.
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      giftBody({ amount: 100, currency: 'MXN' }),
      [{ param: 'currency', code: 'exchange_rate_missing' }],
      allGiftMoney,
    );
  });

  test.each([
    ['the base currency sent', { currency: 'USD', exchange_rate: 1 }],
    ['the base currency by default', { exchange_rate: 2 }],
  ])('exchange_rate with %s: 422 not_allowed', async (_name, body) => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      giftBody(body),
      [{ param: 'exchange_rate', code: 'not_allowed' }],
      allGiftMoney,
    );
  });

  test.each([
    [0, 'out_of_range'],
    [-1.1, 'out_of_range'],
    [1.1234567, 'invalid_format'],
    ['1.1', 'invalid_type'],
    [1e12, 'out_of_range'],
  ])('exchange_rate %p: 422 %s, nothing written', async (rate, errorCode) => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      giftBody({ currency: 'CHF', exchange_rate: rate }),
      [{ param: 'exchange_rate', code: errorCode }],
      allGiftMoney,
    );
  });

  test.each([
    [0.25, 0.12],
    [0.35, 0.18],
    [0.27, 0.14],
    [0.33, 0.16],
  ])('%d CHF at 0.5 is %d: a tie of half a cent goes to the even cent', async (amount, base) => {
    const gift = await createGift({ amount, currency: 'CHF', exchange_rate: 0.5 });
    expect(gift.base_amount).toBe(base);
    expect((await storedGiftMoney(gift.id))?.base_amount).toBe(base.toFixed(2));
  });

  test.each([
    ['with the rate looked up', { currency: 'CHF', gift_date: '2026-03-15' }],
    ['with the rate sent', { currency: 'CHF', exchange_rate: 0.987654 }],
    ['in the base currency', {}],
  ])('a dry run answers what the real call answers, %s, and writes nothing', async (_n, body) => {
    const fund = await newFund();
    const full = giftBody({ ...body, amount: 33.33, fund_id: fund });
    const before = await allGiftMoney();
    const dryQuery = await service.call<Gift>('POST', '/api/v1/gifts?dry_run=true', { body: full });
    const dryHeader = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: full,
      headers: { 'Dry-Run': 'true' },
    });
    expect(await allGiftMoney()).toEqual(before);
    const real = await service.call<Gift>('POST', '/api/v1/gifts', { body: full });
    expect([dryQuery.status, dryHeader.status, real.status]).toEqual([201, 201, 201]);
    expect(dryQuery.body.id).toBe(0);
    expect(unsaved(dryQuery.body)).toEqual(unsaved(real.body));
    expect(unsaved(dryHeader.body)).toEqual(unsaved(real.body));
    expect(await storedGiftMoney(real.body.id)).toMatchObject({
      exchange_rate: real.body.exchange_rate!.toFixed(6),
      base_amount: real.body.base_amount!.toFixed(2),
    });
  });

  test('an Idempotency-Key replay answers the first gift, at its rate, even after a newer rate', async () => {
    await createRate('CHF', 1.15, '2026-03-20');
    const call = () =>
      postGift(
        { amount: 10, currency: 'CHF', gift_date: '2026-03-25' },
        { 'Idempotency-Key': 'chf-1' },
      );
    const first = await call();
    expect(first.status).toBe(201);
    expect([first.body.exchange_rate, first.body.base_amount]).toEqual([1.15, 11.5]);
    await createRate('CHF', 1.19, '2026-03-22');
    const again = await call();
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM gifts WHERE currency = 'CHF' AND gift_date = '2026-03-25'`),
    ).toBe(1);
  });

  test('changing or deleting a rate afterwards changes no posted gift', async () => {
    const february = await createRate('SEK', 0.095, '2026-02-01');
    const gift = await createGift({ amount: 1000, currency: 'SEK', gift_date: '2026-03-15' });
    expect([gift.exchange_rate, gift.base_amount]).toEqual([0.095, 95]);
    const stored = await storedGiftMoney(gift.id);

    // A rate is corrected by a newer one, or by delete and post.
    await createRate('SEK', 0.1, '2026-03-01');
    const deleted = await service.call('DELETE', `/api/v1/exchange-rates/${february.id}`);
    expect(deleted.status).toBe(200);
    await createRate('SEK', 0.2, '2026-02-01');

    expect(await getGift(gift.id)).toEqual(gift);
    expect(await storedGiftMoney(gift.id)).toEqual(stored);
    // A gift posted now on the same date takes the rate in effect now.
    const later = await createGift({ amount: 1000, currency: 'SEK', gift_date: '2026-03-15' });
    expect([later.exchange_rate, later.base_amount]).toEqual([0.1, 100]);
  });
});

describe('parts and refunds in the base currency', () => {
  const funds = { a: 0, b: 0, c: 0 };
  const donors = { whole: 0, half: 0 };

  beforeAll(async () => {
    funds.a = await newFund();
    funds.b = await newFund();
    funds.c = await newFund();
    donors.whole = await newDonor();
    donors.half = await newDonor();
  });

  test('designations and soft credits carry base amounts; refunds, partial then the rest, sum exactly to the gift’s', async () => {
    // 100 × 1.333333 = 133.3333 → 133.33, over 33.33 / 33.33 / 33.34: 44.43, 44.43 and the
    // remainder, 44.47, on the last part (each exact share is 44.4389 or 44.4522).
    const gift = await createGift({
      amount: 100,
      currency: 'EUR',
      exchange_rate: 1.333333,
      designations: [
        { fund_id: funds.a, amount: 33.33 },
        { fund_id: funds.b, amount: 33.33 },
        { fund_id: funds.c, amount: 33.34 },
      ],
      soft_credits: [
        { donor_id: donors.whole, amount: 100, reason: 'household' },
        { donor_id: donors.half, amount: 50, reason: 'solicitor' },
      ],
    });
    expect(gift.base_amount).toBe(133.33);
    expect(gift.designations).toEqual([
      {
        fund_id: funds.a,
        amount: 33.33,
        amount_refunded: 0,
        base_amount: 44.43,
        campaign_id: null,
        appeal_id: null,
      },
      {
        fund_id: funds.b,
        amount: 33.33,
        amount_refunded: 0,
        base_amount: 44.43,
        campaign_id: null,
        appeal_id: null,
      },
      {
        fund_id: funds.c,
        amount: 33.34,
        amount_refunded: 0,
        base_amount: 44.47,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    // A credit of the whole gift is the gift's base amount; 50 × 1.333333 = 66.66665 → 66.67.
    expect(gift.soft_credits).toEqual([
      { donor_id: donors.whole, amount: 100, reason: 'household', base_amount: 133.33 },
      { donor_id: donors.half, amount: 50, reason: 'solicitor', base_amount: 66.67 },
    ]);
    expect(await storedGiftMoney(gift.id)).toEqual({
      currency: 'EUR',
      amount: '100.00',
      exchange_rate: '1.333333',
      base_amount: '133.33',
      base_amount_refunded: '0.00',
      designations: [
        {
          fund_id: funds.a,
          amount: 33.33,
          amount_refunded: 0,
          base_amount: 44.43,
          base_amount_refunded: 0,
        },
        {
          fund_id: funds.b,
          amount: 33.33,
          amount_refunded: 0,
          base_amount: 44.43,
          base_amount_refunded: 0,
        },
        {
          fund_id: funds.c,
          amount: 33.34,
          amount_refunded: 0,
          base_amount: 44.47,
          base_amount_refunded: 0,
        },
      ],
      soft_credits: [
        { donor_id: donors.whole, amount: 100, reason: 'household', base_amount: 133.33 },
        { donor_id: donors.half, amount: 50, reason: 'solicitor', base_amount: 66.67 },
      ],
    });
    expect((await giving(donors.whole)).soft_credit_total).toBe(133.33);
    expect((await giving(donors.half)).soft_credit_total).toBe(66.67);

    // 10 × 1.333333 = 13.33333 → 13.33.
    const first = await refund(gift.id, {
      amount: 10,
      designations: [{ fund_id: funds.a, amount: 10 }],
    });
    expect(first.base_amount).toBe(13.33);
    expect(first.designations).toEqual([{ fund_id: funds.a, amount: 10, base_amount: 13.33 }]);
    // 20 → 26.666666 → 26.67; 10 → 13.33.
    const second = await refund(gift.id, {
      amount: 30,
      designations: [
        { fund_id: funds.b, amount: 20 },
        { fund_id: funds.c, amount: 10 },
      ],
    });
    expect(second.base_amount).toBe(40);
    expect(second.designations).toEqual([
      { fund_id: funds.b, amount: 20, base_amount: 26.67 },
      { fund_id: funds.c, amount: 10, base_amount: 13.33 },
    ]);
    // Soft credits count in proportion to the net base amount, 133.33 − 53.33 = 80: the whole
    // credit exactly 80, the half one ⌊66.67 × 80 / 133.33⌋ = 40.00 (40.0023…).
    expect((await giving(donors.whole)).soft_credit_total).toBe(80);
    expect((await giving(donors.half)).soft_credit_total).toBe(40);

    // The rest gives back the rest of each designation's base amount, not the rest at the rate.
    const rest = await refund(gift.id, {
      amount: 60,
      designations: [
        { fund_id: funds.a, amount: 23.33 },
        { fund_id: funds.b, amount: 13.33 },
        { fund_id: funds.c, amount: 23.34 },
      ],
    });
    expect(rest.designations).toEqual([
      { fund_id: funds.a, amount: 23.33, base_amount: 31.1 },
      { fund_id: funds.b, amount: 13.33, base_amount: 17.76 },
      { fund_id: funds.c, amount: 23.34, base_amount: 31.14 },
    ]);
    expect(rest.base_amount).toBe(80);

    const refunds = await storedRefunds(gift.id);
    expect(refunds.map((row) => row.base_amount)).toEqual(['13.33', '40.00', '80.00']);
    expect(sumCents(refunds.map((row) => row.base_amount as string))).toBe(13333n);
    for (const fund of [funds.a, funds.b, funds.c]) {
      const parts = refunds.flatMap((row) =>
        (row.designations as { fund_id: number; base_amount: number }[]).filter(
          (part) => part.fund_id === fund,
        ),
      );
      const designation = gift.designations.find((part) => part.fund_id === fund)!;
      expect(sumCents(parts.map((part) => part.base_amount))).toBe(
        sumCents([designation.base_amount!]),
      );
      expect((await fundTotals(fund)).gifts_received).toBe(0);
    }
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      base_amount: '133.33',
      base_amount_refunded: '133.33',
      designations: [
        {
          fund_id: funds.a,
          amount_refunded: 33.33,
          base_amount: 44.43,
          base_amount_refunded: 44.43,
        },
        {
          fund_id: funds.b,
          amount_refunded: 33.33,
          base_amount: 44.43,
          base_amount_refunded: 44.43,
        },
        {
          fund_id: funds.c,
          amount_refunded: 33.34,
          base_amount: 44.47,
          base_amount_refunded: 44.47,
        },
      ],
    });
    expect((await giving(donors.whole)).soft_credit_total).toBe(0);
    expect((await giving(donors.half)).soft_credit_total).toBe(0);
  });

  test('a refund without designations is split as the gift is, and the rest still gives back the rest', async () => {
    const fund = await newFund();
    const gift = await createGift({
      amount: 0.03,
      currency: 'EUR',
      exchange_rate: 0.5,
      fund_id: fund,
    });
    // 0.015 → 0.02 (to the even cent).
    expect(gift.base_amount).toBe(0.02);
    const once = await refund(gift.id, { amount: 0.01 });
    // 0.005 → 0.00 (even): nothing of the base amount is given back yet.
    expect(once.base_amount).toBe(0);
    // Each refund at the rate, on its own: 0.005 → 0.00 again.
    const again = await refund(gift.id, { amount: 0.01 });
    expect(again.base_amount).toBe(0);
    // The last gives back all that is left of the base amount.
    const last = await refund(gift.id, { amount: 0.01 });
    expect(last.base_amount).toBe(0.02);
    expect(last.designations).toEqual([{ fund_id: fund, amount: 0.01, base_amount: 0.02 }]);
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      base_amount: '0.02',
      base_amount_refunded: '0.02',
    });
  });

  test('a dry-run refund answers the base amounts the refund records; the list shows what GET shows', async () => {
    const fund = await newFund();
    const gift = await createGift({
      amount: 100,
      currency: 'EUR',
      exchange_rate: 1.0825,
      fund_id: fund,
    });
    const path = `/api/v1/gifts/${gift.id}/refunds`;
    const body = { amount: 33.33, refund_date: '2026-04-01' };
    const dry = await service.call<Refund>('POST', `${path}?dry_run=true`, { body });
    expect(await storedRefunds(gift.id)).toEqual([]);
    const real = await refund(gift.id, body);
    // 33.33 × 1.0825 = 36.079725 → 36.08.
    expect(real).toMatchObject({
      base_amount: 36.08,
      designations: [{ fund_id: fund, amount: 33.33, base_amount: 36.08 }],
    });
    expect({ ...dry.body, id: real.id, created_at: null }).toEqual({ ...real, created_at: null });
    const listed = await service.call<{ data: Gift[] }>('GET', `/api/v1/gifts?fund_id=${fund}`);
    expect(listed.body.data).toEqual([await getGift(gift.id)]);
    expect(listed.body.data[0]).toMatchObject({ exchange_rate: 1.0825, base_amount: 108.25 });
  });

  test('fund totals and donor giving, hard and soft, sum base amounts: dollars + converted yen', async () => {
    const donor = await newDonor();
    const credited = await newDonor();
    const fund = await newFund();
    const soft = (amount: number) => [{ donor_id: credited, amount, reason: 'household' }];
    const yen = await createGift({
      donor_id: donor,
      amount: 10000,
      currency: 'JPY',
      exchange_rate: 0.0067,
      fund_id: fund,
      soft_credits: soft(10000),
    });
    await createGift({ donor_id: donor, amount: 25, fund_id: fund, soft_credits: soft(25) });
    expect(yen.base_amount).toBe(67);
    // 67 + 25, never 10000 + 25.
    expect(await giving(donor)).toMatchObject({ total_amount: 92, gift_count: 2 });
    expect((await fundTotals(fund)).gifts_received).toBe(92);
    expect(await giving(credited)).toMatchObject({ soft_credit_total: 92, total_amount: 0 });

    // 5000 yen back: 33.50 of its 67.
    const back = await refund(yen.id, { amount: 5000 });
    expect(back.base_amount).toBe(33.5);
    expect((await giving(donor)).total_amount).toBe(58.5);
    expect((await fundTotals(fund)).gifts_received).toBe(58.5);
    expect((await giving(credited)).soft_credit_total).toBe(58.5);
    expect(
      await service.db.one(sql.unsafe`
        SELECT sum(base_amount - base_amount_refunded)::text AS base, sum(amount)::text AS amount
        FROM gifts WHERE donor_id = ${donor}`),
    ).toEqual({ base: '58.50', amount: '10025.00' });
  });
  test('a household’s giving sums its members’ base amounts too', async () => {
    const household = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          body: {
            role: 'Household',
            last_name: `Household ${++code}`,
            email: `h${code}@example.org`,
          },
        }),
      )
    ).id;
    const member = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          body: {
            role: 'Individual',
            first_name: 'Kei',
            last_name: 'Tanaka',
            email: `kei${code}@example.org`,
            household_id: household,
          },
        }),
      )
    ).id;
    await createGift({ donor_id: member, amount: 10000, currency: 'JPY', exchange_rate: 0.0067 });
    await createGift({ donor_id: household, amount: 25 });
    expect(await giving(household)).toMatchObject({ total_amount: 92, gift_count: 2 });
    expect(await giving(member)).toMatchObject({ total_amount: 67, gift_count: 1 });
  });
});

describe('PATCH and the rate', () => {
  beforeAll(async () => {
    await createRate('NOK', 0.09, '2026-01-01');
    await createRate('NOK', 0.1, '2026-03-01');
  });

  test('changing gift_date looks the rate up again; a date with none is 422 and changes nothing', async () => {
    const fund = await newFund();
    const gift = await createGift({
      amount: 1000,
      currency: 'NOK',
      gift_date: '2026-01-15',
      fund_id: fund,
    });
    expect([gift.exchange_rate, gift.base_amount]).toEqual([0.09, 90]);
    const moved = await patchGift(gift.id, { gift_date: '2026-03-15' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      exchange_rate: 0.1,
      base_amount: 100,
      designations: [{ fund_id: fund, amount: 1000, amount_refunded: 0, base_amount: 100 }],
    });
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      exchange_rate: '0.100000',
      base_amount: '100.00',
      designations: [
        {
          fund_id: fund,
          amount: 1000,
          amount_refunded: 0,
          base_amount: 100,
          base_amount_refunded: 0,
        },
      ],
    });
    expect((await fundTotals(fund)).gifts_received).toBe(100);
    await expectSameFailureThreeWays(
      service,
      `/api/v1/gifts/${gift.id}`,
      'PATCH',
      { gift_date: '2025-06-01' },
      [{ param: 'currency', code: 'exchange_rate_missing' }],
      () => storedGiftMoney(gift.id),
    );
  });

  test('a dry run of a PATCH that looks the rate up answers what the PATCH answers, and writes nothing', async () => {
    const gift = await createGift({ amount: 500, currency: 'NOK', gift_date: '2026-01-20' });
    const before = await storedGiftMoney(gift.id);
    const dry = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}?dry_run=true`, {
      body: { gift_date: '2026-03-20' },
    });
    expect(await storedGiftMoney(gift.id)).toEqual(before);
    const real = await patchGift(gift.id, { gift_date: '2026-03-20' });
    expect([dry.status, real.status]).toEqual([200, 200]);
    expect(real.body).toMatchObject({ exchange_rate: 0.1, base_amount: 50 });
    expect({ ...dry.body, updated_at: null }).toEqual({ ...real.body, updated_at: null });
  });

  test('changing amount keeps the rate and recomputes the base amounts', async () => {
    const fund = await newFund();
    const gift = await createGift({
      amount: 1000,
      currency: 'NOK',
      exchange_rate: 0.095,
      gift_date: '2026-03-15',
      fund_id: fund,
      soft_credits: [{ donor_id: await newDonor(), amount: 1000, reason: 'household' }],
    });
    const changed = await patchGift(gift.id, {
      amount: 2000,
      soft_credits: gift.soft_credits.map(({ donor_id, reason }) => ({
        donor_id,
        amount: 2000,
        reason,
      })),
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      amount: 2000,
      exchange_rate: 0.095,
      base_amount: 190,
      designations: [{ fund_id: fund, amount: 2000, base_amount: 190 }],
      soft_credits: [{ amount: 2000, base_amount: 190 }],
    });
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      amount: '2000.00',
      exchange_rate: '0.095000',
      base_amount: '190.00',
    });
    expect((await fundTotals(fund)).gifts_received).toBe(190);
  });

  test('a PATCH of the subject keeps the rate although a newer one is in effect; rate and currency may change until locked', async () => {
    const gift = await createGift({ amount: 1000, currency: 'NOK', gift_date: '2026-03-15' });
    expect(gift.exchange_rate).toBe(0.1);
    await createRate('NOK', 0.12, '2026-03-10');
    const renamed = await patchGift(gift.id, { subject: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      subject: 'Renamed',
      exchange_rate: 0.1,
      base_amount: 100,
    });
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      exchange_rate: '0.100000',
      base_amount: '100.00',
    });

    const rated = await patchGift(gift.id, { exchange_rate: 0.11 });
    expect(rated.body).toMatchObject({ exchange_rate: 0.11, base_amount: 110 });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/gifts/${gift.id}`,
      'PATCH',
      { currency: 'USD', exchange_rate: 1 },
      [{ param: 'exchange_rate', code: 'not_allowed' }],
      () => storedGiftMoney(gift.id),
    );
    const dollars = await patchGift(gift.id, { currency: 'USD' });
    expect(dollars.body).toMatchObject({ currency: 'USD', exchange_rate: 1, base_amount: 1000 });
    expect(await storedGiftMoney(gift.id)).toMatchObject({
      currency: 'USD',
      exchange_rate: '1.000000',
      base_amount: '1000.00',
    });
  });

  test.each([
    ['receipted', (id: number) => issueReceipt(id).then(() => undefined)],
    ['refunded', (id: number) => refund(id, { amount: 1 }).then(() => undefined)],
    [
      'voided',
      async (id: number) => {
        const voided = await service.call('POST', `/api/v1/gifts/${id}/void`, {
          body: { reason: 'Duplicate' },
        });
        expect(voided.status).toBe(200);
      },
    ],
  ])('a %s gift keeps its currency and rate: 409 gift_locked', async (_state, lock) => {
    const gift = await createGift({ amount: 1000, currency: 'NOK', gift_date: '2026-02-15' });
    await lock(gift.id);
    for (const body of [
      { currency: 'USD' },
      { exchange_rate: 0.2 },
      { currency: 'EUR', exchange_rate: 1.1 },
    ])
      await expectSameErrorThreeWays(
        service,
        `/api/v1/gifts/${gift.id}`,
        'PATCH',
        body,
        { status: 409, code: 'gift_locked' },
        () => storedGiftMoney(gift.id),
      );
    // The same rate is no change, and other fields still may change.
    const same = await patchGift(gift.id, { exchange_rate: 0.09, subject: 'Still here' });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({
      exchange_rate: 0.09,
      base_amount: 90,
      subject: 'Still here',
    });
  });
});

describe('pledges in their own currency', () => {
  const pledgePath = '/api/v1/pledges';
  const pledgeBody = (donor: number, fund: number, extra: Record<string, unknown> = {}) => ({
    donor_id: donor,
    amount: 1000,
    pledge_date: '2026-01-15',
    fund_id: fund,
    schedule: { frequency: 'monthly', installments: 2, first_due_on: '2026-02-01' },
    ...extra,
  });
  const createPledge = (body: Record<string, unknown>) =>
    created<Pledge>(service.call('POST', pledgePath, { body }));
  const getPledge = async (id: number) =>
    (await service.call<Pledge>('GET', `${pledgePath}/${id}`)).body;
  const pay = (donor: number, pledge: number, extra: Record<string, unknown>) =>
    postGift({ donor_id: donor, pledge_id: pledge, gift_date: '2026-03-15', ...extra });

  beforeAll(async () => {
    await createRate('CAD', 0.7, '2026-01-01');
    await createRate('CAD', 0.75, '2026-03-01');
  });

  test('a pledge without currency is in the base currency at rate 1', async () => {
    const pledge = await createPledge(pledgeBody(await newDonor(), await newFund()));
    expect(pledge).toMatchObject({
      currency: 'USD',
      exchange_rate: 1,
      base_amount: 1000,
      base_balance: 1000,
    });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      currency: 'USD',
      exchange_rate: '1.000000',
      base_amount: '1000.00',
      base_balance: '1000.00',
    });
  });

  test('a pledge in CAD: payments in its currency at their own rates, the balance at the pledge’s', async () => {
    const donor = await newDonor();
    const fund = await newFund();
    const pledge = await createPledge(pledgeBody(donor, fund, { currency: 'CAD' }));
    expect(pledge).toMatchObject({
      currency: 'CAD',
      exchange_rate: 0.7,
      amount: 1000,
      base_amount: 700,
      base_amount_paid: 0,
      balance: 1000,
      base_balance: 700,
    });
    expect(await storedPledgeMoney(pledge.id)).toEqual({
      currency: 'CAD',
      amount: '1000.00',
      exchange_rate: '0.700000',
      base_amount: '700.00',
      amount_paid: '0.00',
      base_amount_paid: '0.00',
      base_balance: '700.00',
      status: 'open',
    });

    const payments = () =>
      service.db.any(sql.unsafe`SELECT id FROM gifts WHERE pledge_id = ${pledge.id}`);
    for (const body of [{ currency: 'USD' }, { currency: 'GBP', exchange_rate: 1.25 }])
      await expectSameFailureThreeWays(
        service,
        '/api/v1/gifts',
        'POST',
        giftBody({ donor_id: donor, pledge_id: pledge.id, amount: 100, ...body }),
        [{ param: 'currency', code: 'invalid_value' }],
        async () => ({ payments: await payments(), pledge: await storedPledgeMoney(pledge.id) }),
      );

    // No currency: the pledge's, at the rate in effect on the payment's date (0.75).
    const first = await pay(donor, pledge.id, { amount: 300 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ currency: 'CAD', exchange_rate: 0.75, base_amount: 225 });
    const partly = await getPledge(pledge.id);
    expect(partly).toMatchObject({
      amount_paid: 300,
      balance: 700,
      base_amount_paid: 225,
      base_balance: 490,
      status: 'open',
    });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      amount_paid: '300.00',
      base_amount_paid: '225.00',
      base_balance: '490.00',
    });
    expect((await giving(donor)).pledged_outstanding).toBe(490);
    expect((await giving(donor)).total_amount).toBe(225);
    expect((await fundTotals(fund)).pledged_outstanding).toBe(490);
    const receivables = await service.call<{ data: Record<string, unknown>[] }>(
      'GET',
      `${pledgePath}/receivables?fund_id=${fund}`,
    );
    expect(receivables.status).toBe(200);
    expect(receivables.body.data).toEqual([
      expect.objectContaining({
        pledge_id: pledge.id,
        amount: 1000,
        currency: 'CAD',
        balance: 700,
        base_balance: 490,
      }),
    ]);

    // The rest at a rate sent: fulfilled, nothing outstanding.
    const rest = await pay(donor, pledge.id, { amount: 700, currency: 'CAD', exchange_rate: 0.8 });
    expect(rest.status).toBe(201);
    expect(rest.body.base_amount).toBe(560);
    expect(await getPledge(pledge.id)).toMatchObject({
      status: 'fulfilled',
      balance: 0,
      base_amount_paid: 785,
      base_balance: 0,
    });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      status: 'fulfilled',
      base_amount_paid: '785.00',
      base_balance: '0.00',
    });
    expect(await giving(donor)).toMatchObject({ pledged_outstanding: 0, total_amount: 785 });
    expect((await fundTotals(fund)).pledged_outstanding).toBe(0);
  });

  test('a new rate on a payment, or on an unpaid pledge, moves the pledge’s base figures and the totals', async () => {
    const donor = await newDonor();
    const fund = await newFund();
    const pledge = await createPledge(pledgeBody(donor, fund, { currency: 'CAD' }));
    const rated = await service.call<Pledge>('PATCH', `${pledgePath}/${pledge.id}`, {
      body: { exchange_rate: 0.72 },
    });
    expect(rated.status).toBe(200);
    expect(rated.body).toMatchObject({ exchange_rate: 0.72, base_amount: 720, base_balance: 720 });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      exchange_rate: '0.720000',
      base_amount: '720.00',
      base_balance: '720.00',
    });
    expect((await giving(donor)).pledged_outstanding).toBe(720);
    expect((await fundTotals(fund)).pledged_outstanding).toBe(720);

    const payment = await pay(donor, pledge.id, { amount: 400 });
    expect(payment.body).toMatchObject({ currency: 'CAD', exchange_rate: 0.75, base_amount: 300 });
    const changed = await patchGift(payment.body.id, { exchange_rate: 0.8 });
    expect(changed.status).toBe(200);
    expect(changed.body.base_amount).toBe(320);
    // 600 left at the pledge's 0.72.
    expect(await getPledge(pledge.id)).toMatchObject({ base_amount_paid: 320, base_balance: 432 });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      base_amount_paid: '320.00',
      base_balance: '432.00',
    });
    expect(await giving(donor)).toMatchObject({ total_amount: 320, pledged_outstanding: 432 });
    expect((await fundTotals(fund)).pledged_outstanding).toBe(432);
  });

  test('a split pledge owes each fund its share of the base balance, the cents left over on the last', async () => {
    const donor = await newDonor();
    const [first, second] = [await newFund(), await newFund()];
    const pledge = await createPledge(
      pledgeBody(donor, first, {
        currency: 'CAD',
        fund_id: undefined,
        designations: [
          { fund_id: first, amount: 333.33 },
          { fund_id: second, amount: 666.67 },
        ],
      }),
    );
    expect(pledge.base_balance).toBe(700);
    // ⌊700 × 333.33 / 1000⌋ = 233.33 (233.331), the rest 466.67 on the last.
    expect((await fundTotals(first)).pledged_outstanding).toBe(233.33);
    expect((await fundTotals(second)).pledged_outstanding).toBe(466.67);
    expect((await giving(donor)).pledged_outstanding).toBe(700);
  });

  test('a written-off pledge owes nothing in the base currency either', async () => {
    const donor = await newDonor();
    const fund = await newFund();
    const pledge = await createPledge(pledgeBody(donor, fund, { currency: 'CAD', amount: 500 }));
    expect(pledge.base_amount).toBe(350);
    expect((await pay(donor, pledge.id, { amount: 100 })).status).toBe(201);
    expect((await getPledge(pledge.id)).base_balance).toBe(280);
    const off = await service.call<Pledge>('POST', `${pledgePath}/${pledge.id}/write-off`, {
      body: { reason: 'Moved away' },
    });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({
      status: 'written_off',
      base_amount_paid: 75,
      base_balance: 0,
    });
    expect(await storedPledgeMoney(pledge.id)).toMatchObject({
      status: 'written_off',
      base_amount_paid: '75.00',
      base_balance: '0.00',
    });
    expect((await giving(donor)).pledged_outstanding).toBe(0);
    expect((await fundTotals(fund)).pledged_outstanding).toBe(0);
  });
});

describe('recurring gifts', () => {
  const path = '/api/v1/recurring-gifts';

  beforeAll(async () => {
    await createRate('AUD', 0.65, '2026-01-01');
  });

  test('exchange_rate and base_amount; total_given sums the payments’ net base amounts', async () => {
    const donor = await newDonor();
    const recurring = await created<RecurringGift>(
      service.call('POST', path, {
        body: {
          donor_id: donor,
          amount: 50,
          currency: 'AUD',
          frequency: 'monthly',
          start_on: '2026-01-10',
        },
      }),
    );
    expect(recurring).toMatchObject({ currency: 'AUD', exchange_rate: 0.65, base_amount: 32.5 });
    expect(await storedRecurringMoney(recurring.id)).toEqual({
      currency: 'AUD',
      amount: '50.00',
      exchange_rate: '0.650000',
      base_amount: '32.50',
    });
    const payment = (extra: Record<string, unknown>) =>
      createGift({ donor_id: donor, recurring_gift_id: recurring.id, amount: 50, ...extra });
    const looked = await payment({ currency: 'AUD', gift_date: '2026-02-10' });
    const sent = await payment({ currency: 'AUD', gift_date: '2026-03-10', exchange_rate: 0.7 });
    await payment({ amount: 20, gift_date: '2026-04-10' });
    expect([looked.base_amount, sent.base_amount]).toEqual([32.5, 35]);
    const read = async () =>
      (await service.call<RecurringGift>('GET', `${path}/${recurring.id}`)).body;
    // 32.50 + 35 + 20, not 50 + 50 + 20.
    expect(await read()).toMatchObject({ gift_count: 3, total_given: 87.5 });
    await refund(sent.id, { amount: 10 });
    expect((await read()).total_given).toBe(80.5);
    expect(await giving(donor)).toMatchObject({ total_amount: 80.5 });
  });

  test('exchange_rate with the base currency: 422 not_allowed, nothing written', async () => {
    await expectSameFailureThreeWays(
      service,
      path,
      'POST',
      {
        donor_id: ids.donor,
        amount: 50,
        frequency: 'monthly',
        start_on: '2026-01-10',
        exchange_rate: 1,
      },
      [{ param: 'exchange_rate', code: 'not_allowed' }],
      () => service.count('recurring_gifts'),
    );
    await expectSameFailureThreeWays(
      service,
      path,
      'POST',
      {
        donor_id: ids.donor,
        amount: 50,
        currency: 'AUD',
        frequency: 'monthly',
        start_on: '2025-01-10',
      },
      [{ param: 'currency', code: 'exchange_rate_missing' }],
      () => service.count('recurring_gifts'),
    );
  });
});
