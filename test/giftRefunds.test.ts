// Gift refunds: POST and GET /gifts/{id}/refunds (giving.md §3), what they change and what they
// refuse.
import { sql } from 'slonik';
import {
  createFund,
  createGift,
  donorGiving,
  fundReceived,
  getGift,
  ids,
  issueReceipt,
  moneyState,
  other,
  receiptState,
  refund,
  refundsPath,
  service,
  setUpRefundTests,
  type Refund,
} from './helpers/giftRefunds.js';
import { ISO_MS } from './helpers/responses.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpRefundTests();

interface Page {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Refund[];
}

const storedRefunds = (giftId: number) =>
  service.db.any(sql.unsafe`
    SELECT gift_id, amount::text, refund_date::text, reason, designations
    FROM gift_refunds WHERE gift_id = ${giftId} ORDER BY id`);

const storedGift = (giftId: number) =>
  service.db.one(sql.unsafe`
    SELECT amount_refunded::text, designations, updated_at FROM gifts WHERE id = ${giftId}`) as Promise<{
    amount_refunded: string;
    designations: unknown[];
  }>;

describe('POST /gifts/{id}/refunds', () => {
  test('an undesignated gift: 201 with the refund, the gift and the donor’s giving net of it', async () => {
    const before = await donorGiving();
    const gift = await createGift(100);
    const response = await service.call<Refund>('POST', refundsPath(gift.id), {
      body: { amount: 30.5, refund_date: '2026-04-01', reason: '  Charged twice  ' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      object: 'gift_refund',
      id: expect.any(Number),
      gift_id: gift.id,
      amount: 30.5,
      base_amount: 30.5,
      refund_date: '2026-04-01',
      reason: 'Charged twice',
      designations: [],
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(response.body.id).toBeGreaterThan(0);
    const location = `${refundsPath(gift.id)}/${response.body.id}`;
    expect(response.headers.get('Location')).toBe(location);
    const retrieved = await service.call<Refund>('GET', location);
    expect([retrieved.status, retrieved.body]).toEqual([200, response.body]);
    expect(await storedRefunds(gift.id)).toEqual([
      {
        gift_id: gift.id,
        amount: '30.50',
        refund_date: '2026-04-01',
        reason: 'Charged twice',
        designations: [],
      },
    ]);
    const after = await getGift(gift.id);
    expect(after).toMatchObject({
      status: 'posted',
      amount: 100,
      amount_refunded: 30.5,
      net_amount: 69.5,
    });
    expect(after.updated_at > gift.updated_at).toBe(true);
    expect(await donorGiving()).toMatchObject({
      total_amount: before.total_amount + 69.5,
      gift_count: before.gift_count + 1,
    });
  });

  test('a gift of one designation: designations may be omitted; the answer names the fund, the fund’s total drops', async () => {
    const fund = await createFund();
    const gift = await createGift(80, [{ fund_id: fund, amount: 80 }]);
    const body = await refund(gift.id, { amount: 20, refund_date: '2026-03-15' });
    expect(body).toMatchObject({
      reason: null,
      designations: [{ fund_id: fund, amount: 20, base_amount: 20 }],
    });
    expect(await storedGift(gift.id)).toMatchObject({
      amount_refunded: '20.00',
      designations: [{ fund_id: fund, amount: 80, amount_refunded: 20 }],
    });
    expect(await fundReceived(fund)).toBe(60);
    expect((await getGift(gift.id)).designations).toEqual([
      {
        fund_id: fund,
        amount: 80,
        amount_refunded: 20,
        base_amount: 80,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
  });

  test('a split gift: each fund gives back its part, refund after refund, until nothing is left', async () => {
    const [a, b] = [await createFund(), await createFund()];
    const gift = await createGift(100, [
      { fund_id: a, amount: 60 },
      { fund_id: b, amount: 40 },
    ]);
    const first = await refund(gift.id, {
      amount: 50,
      refund_date: '2026-05-01',
      designations: [
        { fund_id: b, amount: 40 },
        { fund_id: a, amount: 10 },
      ],
    });
    expect(first.designations).toEqual([
      { fund_id: b, amount: 40, base_amount: 40 },
      { fund_id: a, amount: 10, base_amount: 10 },
    ]);
    expect(await storedGift(gift.id)).toMatchObject({
      amount_refunded: '50.00',
      designations: [
        { fund_id: a, amount: 60, amount_refunded: 10 },
        { fund_id: b, amount: 40, amount_refunded: 40 },
      ],
    });
    expect([await fundReceived(a), await fundReceived(b)]).toEqual([50, 0]);

    await refund(gift.id, {
      amount: 50,
      refund_date: '2026-05-02',
      designations: [{ fund_id: a, amount: 50 }],
    });
    expect(await getGift(gift.id)).toMatchObject({ amount_refunded: 100, net_amount: 0 });
    expect([await fundReceived(a), await fundReceived(b)]).toEqual([0, 0]);
    const more = await service.call('POST', refundsPath(gift.id), {
      body: {
        amount: 0.01,
        refund_date: '2026-05-03',
        designations: [{ fund_id: a, amount: 0.01 }],
      },
    });
    expect(more.status).toBe(422);
  });

  test('voids the gift’s issued receipt in the same transaction; a voided receipt stays as it was', async () => {
    const gift = await createGift(40);
    const receipt = await issueReceipt(gift.id);
    const made = await refund(gift.id, { amount: 10, refund_date: '2026-04-01' });
    expect(await receiptState(receipt)).toEqual({
      status: 'void',
      void_reason: `The gift was refunded (refund ${made.id}).`,
      voided: true,
    });
    const second = await issueReceipt(gift.id);
    await refund(gift.id, { amount: 10, refund_date: '2026-04-02' });
    expect((await receiptState(second)).status).toBe('void');
    expect((await receiptState(receipt)).void_reason).toBe(
      `The gift was refunded (refund ${made.id}).`,
    );
  });

  test('a dry run answers as the real call would, with id 0, and writes nothing', async () => {
    const fund = await createFund();
    const gift = await createGift(30, [{ fund_id: fund, amount: 30 }]);
    const receipt = await issueReceipt(gift.id);
    const body = { amount: 30, refund_date: '2026-03-16', reason: 'Returned' };
    const before = await moneyState();
    for (const dry of [
      await service.call<Refund>('POST', `${refundsPath(gift.id)}?dry_run=true`, { body }),
      await service.call<Refund>('POST', refundsPath(gift.id), {
        body,
        headers: { 'Dry-Run': 'true' },
      }),
    ]) {
      expect(dry.status).toBe(201);
      expect(dry.headers.get('Location')).toBeNull();
      expect(dry.body).toEqual({
        object: 'gift_refund',
        id: 0,
        gift_id: gift.id,
        amount: 30,
        base_amount: 30,
        refund_date: '2026-03-16',
        reason: 'Returned',
        designations: [{ fund_id: fund, amount: 30, base_amount: 30 }],
        created_at: expect.stringMatching(ISO_MS),
      });
    }
    expect(await moneyState()).toEqual(before);
    expect((await receiptState(receipt)).status).toBe('issued');
    const real = await refund(gift.id, body);
    expect({ ...real, id: 0, created_at: '' }).toEqual({
      object: 'gift_refund',
      id: 0,
      gift_id: gift.id,
      amount: 30,
      base_amount: 30,
      refund_date: '2026-03-16',
      reason: 'Returned',
      designations: [{ fund_id: fund, amount: 30, base_amount: 30 }],
      created_at: '',
    });
  });

  test('an Idempotency-Key replay answers the same refund and refunds once', async () => {
    const gift = await createGift(25);
    const call = () =>
      service.call<Refund>('POST', refundsPath(gift.id), {
        body: { amount: 5, refund_date: '2026-04-01' },
        headers: { 'Idempotency-Key': `refund-${gift.id}` },
      });
    const first = await call();
    const again = await call();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await storedRefunds(gift.id)).toHaveLength(1);
    expect((await storedGift(gift.id)).amount_refunded).toBe('5.00');
  });
});

describe('what a refund refuses, answered alike by the real call and both dry runs, changing nothing', () => {
  const fundIds = { a: 0, b: 0, single: 0 };
  const gifts = { plain: 0, single: 0, split: 0, voided: 0 };

  beforeAll(async () => {
    fundIds.a = await createFund();
    fundIds.b = await createFund();
    fundIds.single = await createFund();
    gifts.plain = (await createGift(50)).id;
    gifts.single = (await createGift(50, [{ fund_id: fundIds.single, amount: 50 }])).id;
    gifts.split = (
      await createGift(100, [
        { fund_id: fundIds.a, amount: 60 },
        { fund_id: fundIds.b, amount: 40 },
      ])
    ).id;
    await refund(gifts.split, {
      amount: 10,
      refund_date: '2026-03-15',
      designations: [{ fund_id: fundIds.b, amount: 10 }],
    });
    gifts.voided = (await createGift(20)).id;
    const voided = await service.call('POST', `/api/v1/gifts/${gifts.voided}/void`, {
      body: { reason: 'Entered twice' },
    });
    expect(voided.status).toBe(200);
  });

  const split = (parts: [keyof typeof fundIds, number][]) =>
    parts.map(([fund, amount]) => ({ fund_id: fundIds[fund], amount }));

  test.each<
    [string, keyof typeof gifts, () => Record<string, unknown>, { param: string; code: string }[]]
  >([
    [
      'more than the gift’s net amount',
      'split',
      () => ({
        amount: 90.01,
        refund_date: '2026-04-01',
        designations: split([
          ['a', 60],
          ['b', 30.01],
        ]),
      }),
      [
        { param: 'amount', code: 'out_of_range' },
        { param: 'designations.1.amount', code: 'out_of_range' },
      ],
    ],
    [
      'more than an undesignated gift holds',
      'plain',
      () => ({ amount: 50.01, refund_date: '2026-04-01' }),
      [{ param: 'amount', code: 'out_of_range' }],
    ],
    [
      'a refund date before the gift’s date',
      'plain',
      () => ({ amount: 1, refund_date: '2026-03-14' }),
      [{ param: 'refund_date', code: 'out_of_range' }],
    ],
    [
      'no such day',
      'plain',
      () => ({ amount: 1, refund_date: '2026-02-30' }),
      [{ param: 'refund_date', code: 'invalid_format' }],
    ],
    [
      'nothing sent',
      'plain',
      () => ({}),
      [
        { param: 'amount', code: 'required' },
        { param: 'refund_date', code: 'required' },
      ],
    ],
    [
      'bad values, a long reason, read-only and unknown fields',
      'plain',
      () => ({
        amount: '5',
        refund_date: 20260401,
        reason: 'x'.repeat(501),
        gift_id: 1,
        status: 'posted',
      }),
      [
        { param: 'amount', code: 'invalid_type' },
        { param: 'refund_date', code: 'invalid_type' },
        { param: 'reason', code: 'too_long' },
        { param: 'gift_id', code: 'unknown_field' },
        { param: 'status', code: 'unknown_field' },
      ],
    ],
    [
      'a split gift without designations',
      'split',
      () => ({ amount: 5, refund_date: '2026-04-01' }),
      [{ param: 'designations', code: 'required' }],
    ],
    [
      'designations that do not sum to the amount',
      'split',
      () => ({
        amount: 5,
        refund_date: '2026-04-01',
        designations: split([
          ['a', 3],
          ['b', 1],
        ]),
      }),
      [{ param: 'designations', code: 'designation_total_mismatch' }],
    ],
    [
      'a fund twice',
      'split',
      () => ({
        amount: 5,
        refund_date: '2026-04-01',
        designations: split([
          ['a', 3],
          ['a', 2],
        ]),
      }),
      [{ param: 'designations.1.fund_id', code: 'already_in_use' }],
    ],
    [
      'a fund that is not one of the gift’s designations',
      'split',
      () => ({
        amount: 5,
        refund_date: '2026-04-01',
        designations: split([
          ['a', 3],
          ['single', 2],
        ]),
      }),
      [{ param: 'designations.1.fund_id', code: 'invalid_value' }],
    ],
    [
      'another institution’s fund: as any fund not on the gift',
      'split',
      () => ({
        amount: 5,
        refund_date: '2026-04-01',
        designations: [...split([['a', 3]]), { fund_id: ids.otherFund, amount: 2 }],
      }),
      [{ param: 'designations.1.fund_id', code: 'invalid_value' }],
    ],
    [
      'more than a fund still holds of the gift (40, of which 10 was refunded)',
      'split',
      () => ({
        amount: 50,
        refund_date: '2026-04-01',
        designations: split([
          ['b', 30.01],
          ['a', 19.99],
        ]),
      }),
      [{ param: 'designations.0.amount', code: 'out_of_range' }],
    ],
    [
      'designations on an undesignated gift',
      'plain',
      () => ({ amount: 5, refund_date: '2026-04-01', designations: split([['a', 5]]) }),
      [{ param: 'designations.0.fund_id', code: 'invalid_value' }],
    ],
    [
      'a malformed designation',
      'single',
      () => ({
        amount: 5,
        refund_date: '2026-04-01',
        designations: [{ fund_id: fundIds.single, amount: 4, note: 'x' }],
      }),
      [{ param: 'designations.0.note', code: 'unknown_field' }],
    ],
  ])('%s: 422', async (_name, gift, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      refundsPath(gifts[gift]),
      'POST',
      body,
      expected,
      moneyState,
    );
  });

  test('a voided gift: 422 invalid_value at gift_id, beside the body’s own problems', async () => {
    await expectSameFailureThreeWays(
      service,
      refundsPath(gifts.voided),
      'POST',
      { amount: 1, refund_date: '2026-04-01' },
      [{ param: 'gift_id', code: 'invalid_value' }],
      moneyState,
    );
    await expectSameFailureThreeWays(
      service,
      refundsPath(gifts.voided),
      'POST',
      { refund_date: '2026-01-01' },
      [
        { param: 'gift_id', code: 'invalid_value' },
        { param: 'amount', code: 'required' },
        { param: 'refund_date', code: 'out_of_range' },
      ],
      moneyState,
    );
  });

  test('another institution’s gift is as absent as a missing one, and theirs is untouched', async () => {
    const answers = [];
    for (const id of [String(ids.otherGift), '999999', 'abc', '007']) {
      const path = `/api/v1/gifts/${id}/refunds`;
      await expectSameErrorThreeWays(
        service,
        path,
        'POST',
        { amount: 1, refund_date: '2026-04-01' },
        { status: 404, code: 'resource_not_found' },
        moneyState,
      );
      const listed = await service.call<{ error: { message: string; param: string } }>('GET', path);
      expect(listed.status).toBe(404);
      answers.push({ message: listed.body.error.message, param: listed.body.error.param });
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    const theirs = await service.call('GET', refundsPath(ids.otherGift), { key: other.key });
    expect(theirs.status).toBe(200);
    expect((theirs.body as unknown as Page).data).toEqual([]);
  });
});

describe('GET /gifts/{id}/refunds/{refund_id}', () => {
  test('a refund is found under its own gift only, and only by its institution', async () => {
    const gift = await createGift(10);
    const otherGift = await createGift(10);
    const made = await refund(gift.id, { amount: 1, refund_date: '2026-04-01' });
    const found = await service.call<Refund>('GET', `${refundsPath(gift.id)}/${made.id}`);
    expect([found.status, found.body]).toEqual([200, made]);
    const absent = [
      [`${refundsPath(otherGift.id)}/${made.id}`, service.tenant.key],
      [`${refundsPath(gift.id)}/999999`, service.tenant.key],
      [`${refundsPath(gift.id)}/abc`, service.tenant.key],
      [`${refundsPath(gift.id)}/${made.id}`, other.key],
    ] as const;
    for (const [path, key] of absent) {
      const answer = await service.call<{ error: { code: string } }>('GET', path, { key });
      expect([path, answer.status, answer.body.error.code]).toEqual([
        path,
        404,
        'resource_not_found',
      ]);
    }
  });
});

describe('GET /gifts/{id}/refunds', () => {
  test('the gift’s refunds only, newest first, paged with cursors that belong to the gift', async () => {
    const gift = await createGift(10);
    const otherGift = await createGift(10);
    const made = [];
    for (const day of ['01', '02', '03'])
      made.push(await refund(gift.id, { amount: 1, refund_date: `2026-04-${day}` }));
    await refund(otherGift.id, { amount: 1, refund_date: '2026-04-01' });

    const all = await service.call<Page>('GET', refundsPath(gift.id));
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      object: 'list',
      url: refundsPath(gift.id),
      has_more: false,
      next_cursor: null,
      previous_cursor: null,
      data: [...made].reverse(),
    });

    const first = await service.call<Page>('GET', `${refundsPath(gift.id)}?limit=2`);
    expect(first.body.data.map((item) => item.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(first.body.has_more).toBe(true);
    const cursor = encodeURIComponent(first.body.next_cursor!);
    const second = await service.call<Page>(
      'GET',
      `${refundsPath(gift.id)}?limit=2&starting_after=${cursor}`,
    );
    expect(second.body.data).toEqual([made[0]]);
    const elsewhere = await service.call<{ error: { code: string } }>(
      'GET',
      `${refundsPath(otherGift.id)}?starting_after=${cursor}`,
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.code).toBe('invalid_cursor');

    const none = await service.call<Page>('GET', refundsPath((await createGift(5)).id));
    expect(none.body.data).toEqual([]);
    const unknown = await service.call<{ error: { code: string } }>(
      'GET',
      `${refundsPath(gift.id)}?reason=x`,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('invalid_parameter');
  });
});

describe('a refunded gift is locked', () => {
  test('DELETE and a PATCH of its money: 409 gift_locked, nothing changes; other fields still may', async () => {
    const gift = await createGift(60);
    await refund(gift.id, { amount: 1, refund_date: '2026-04-01' });
    const before = await moneyState();
    const removed = await service.call<{ error: { code: string } }>(
      'DELETE',
      `/api/v1/gifts/${gift.id}`,
    );
    expect(removed.status).toBe(409);
    expect(removed.body.error.code).toBe('gift_locked');
    await expectSameErrorThreeWays(
      service,
      `/api/v1/gifts/${gift.id}`,
      'PATCH',
      { amount: 70 },
      { status: 409, code: 'gift_locked' },
      moneyState,
    );
    expect(await moneyState()).toEqual(before);
    const renamed = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ subject: 'Renamed', amount_refunded: 1, net_amount: 59 });
  });
});
