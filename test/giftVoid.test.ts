// POST /gifts/{id}/void (giving.md §3): a gift entered in error leaves every total, for good.
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
  type Gift,
} from './helpers/giftRefunds.js';
import { ISO_MS } from './helpers/responses.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpRefundTests();

const voidPath = (giftId: number) => `/api/v1/gifts/${giftId}/void`;

test('voids a refunded, receipted split gift: 200 with the gift as GET answers it; it leaves every total and its receipt is voided', async () => {
  const [a, b] = [await createFund(), await createFund()];
  const kept = await createGift(7, [{ fund_id: a, amount: 7 }]);
  const gift = await createGift(100, [
    { fund_id: a, amount: 70 },
    { fund_id: b, amount: 30 },
  ]);
  await refund(gift.id, {
    amount: 10,
    refund_date: '2026-04-01',
    designations: [{ fund_id: a, amount: 10 }],
  });
  const receipt = await issueReceipt(gift.id);
  expect([await fundReceived(a), await fundReceived(b)]).toEqual([67, 30]);
  const giving = await donorGiving();
  expect(giving).toMatchObject({ total_amount: 97, gift_count: 2 });

  const response = await service.call<Gift>('POST', voidPath(gift.id), {
    body: { reason: '  Entered twice  ' },
  });
  expect(response.status).toBe(200);
  const after = await getGift(gift.id);
  expect(response.body).toEqual(after);
  expect(after).toMatchObject({
    id: gift.id,
    object: 'gift',
    amount: 100,
    status: 'voided',
    amount_refunded: 10,
    net_amount: 0,
    void_reason: 'Entered twice',
    voided_at: expect.stringMatching(ISO_MS),
    designations: [
      { fund_id: a, amount: 70, amount_refunded: 10 },
      { fund_id: b, amount: 30, amount_refunded: 0 },
    ],
  });
  expect(after.updated_at > gift.updated_at).toBe(true);
  expect([await fundReceived(a), await fundReceived(b)]).toEqual([7, 0]);
  expect(await donorGiving()).toMatchObject({ total_amount: 7, gift_count: 1 });
  expect(await receiptState(receipt)).toEqual({
    status: 'void',
    void_reason: 'The gift was voided: Entered twice',
    voided: true,
  });
  expect((await getGift(kept.id)).status).toBe('posted');
  const listed = await service.call<{ data: Gift[] }>(
    'GET',
    `/api/v1/gifts?status=voided&donor_id=${ids.donor}`,
  );
  expect(listed.body.data.map((item) => item.id)).toEqual([gift.id]);
});

test('a dry run answers the gift as it would be, and writes nothing', async () => {
  const gift = await createGift(12);
  const receipt = await issueReceipt(gift.id);
  const before = await moneyState();
  for (const dry of [
    await service.call<Gift>('POST', `${voidPath(gift.id)}?dry_run=true`, {
      body: { reason: 'Test' },
    }),
    await service.call<Gift>('POST', voidPath(gift.id), {
      body: { reason: 'Test' },
      headers: { 'Dry-Run': 'true' },
    }),
  ]) {
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...gift,
      status: 'voided',
      net_amount: 0,
      void_reason: 'Test',
      voided_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  }
  expect(await moneyState()).toEqual(before);
  expect((await receiptState(receipt)).status).toBe('issued');
});

test('an Idempotency-Key replay answers the same gift; a second void with another key is 409', async () => {
  const gift = await createGift(9);
  const call = (key: string) =>
    service.call<Gift>('POST', voidPath(gift.id), {
      body: { reason: 'Duplicate' },
      headers: { 'Idempotency-Key': key },
    });
  const first = await call(`void-${gift.id}`);
  const replay = await call(`void-${gift.id}`);
  expect(first.status).toBe(200);
  expect(replay.status).toBe(200);
  expect(replay.body).toEqual(first.body);
  expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
  await expectSameErrorThreeWays(
    service,
    voidPath(gift.id),
    'POST',
    { reason: 'Again' },
    { status: 409, code: 'invalid_state_transition' },
    moneyState,
  );
  expect((await getGift(gift.id)).void_reason).toBe('Duplicate');
});

test('concurrent voids of one gift: one succeeds, the others are 409', async () => {
  const gift = await createGift(11);
  const responses = await Promise.all(
    Array.from({ length: 5 }, (_, n) =>
      service.call('POST', voidPath(gift.id), { body: { reason: `Void ${n}` } }),
    ),
  );
  expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409, 409, 409]);
});

describe('a voided gift', () => {
  let voided: Gift;
  beforeAll(async () => {
    voided = await createGift(15);
    const response = await service.call<Gift>('POST', voidPath(voided.id), {
      body: { reason: 'Wrong donor' },
    });
    voided = response.body;
  });

  test('cannot be refunded, patched in its money or deleted; nothing changes', async () => {
    await expectSameFailureThreeWays(
      service,
      refundsPath(voided.id),
      'POST',
      { amount: 1, refund_date: '2026-04-01' },
      [{ param: 'gift_id', code: 'invalid_value' }],
      moneyState,
    );
    await expectSameErrorThreeWays(
      service,
      `/api/v1/gifts/${voided.id}`,
      'PATCH',
      { amount: 16 },
      { status: 409, code: 'gift_locked' },
      moneyState,
    );
    const before = await moneyState();
    const removed = await service.call<{ error: { code: string } }>(
      'DELETE',
      `/api/v1/gifts/${voided.id}`,
    );
    expect(removed.status).toBe(409);
    expect(removed.body.error.code).toBe('gift_locked');
    expect(await moneyState()).toEqual(before);
    expect(await getGift(voided.id)).toEqual(voided);
  });
});

test.each<[string, () => Record<string, unknown>, { param: string; code: string }[]]>([
  ['no reason', () => ({}), [{ param: 'reason', code: 'required' }]],
  ['a blank reason', () => ({ reason: '   ' }), [{ param: 'reason', code: 'required' }]],
  [
    'a long reason and an unknown field',
    () => ({ reason: 'x'.repeat(501), status: 'voided' }),
    [
      { param: 'reason', code: 'too_long' },
      { param: 'status', code: 'unknown_field' },
    ],
  ],
])('%s: 422, and the gift stays posted', async (_name, body, expected) => {
  const gift = await createGift(5);
  await expectSameFailureThreeWays(service, voidPath(gift.id), 'POST', body, expected, moneyState);
  expect((await getGift(gift.id)).status).toBe('posted');
});

test('another institution’s gift is as absent as a missing one, and stays posted', async () => {
  for (const id of [ids.otherGift, 999999]) {
    await expectSameErrorThreeWays(
      service,
      voidPath(id),
      'POST',
      { reason: 'Not mine' },
      { status: 404, code: 'resource_not_found' },
      moneyState,
    );
  }
  const theirs = await service.db.oneFirst(
    sql.unsafe`SELECT status FROM gifts WHERE id = ${ids.otherGift}`,
  );
  expect(theirs).toBe('posted');
  const mine = await service.call('GET', `/api/v1/gifts/${ids.otherGift}`, { key: other.key });
  expect(mine.body).toMatchObject({ status: 'posted', net_amount: 50 });
});
