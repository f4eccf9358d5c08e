// Refunds racing for the last of a gift across two workers never give back more than it holds.
import { sql } from 'slonik';
import {
  createFund,
  createGift,
  fundReceived,
  getGift,
  refundsPath,
  service,
  setUpRefundTests,
} from './helpers/giftRefunds.js';
import { fieldErrors } from './helpers/threeWays.js';

setUpRefundTests({ workers: 2 });

const refundsOf = (giftId: number) =>
  service.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM gift_refunds WHERE gift_id = ${giftId}`);

test('12 concurrent refunds of 30 from a gift of 100: exactly 3 succeed, 9 are refused cleanly', async () => {
  expect(service.workers).toHaveLength(2);
  const fund = await createFund();
  const gift = await createGift(100, [{ fund_id: fund, amount: 100 }]);
  const responses = await Promise.all(
    Array.from({ length: 12 }, () =>
      service.call('POST', refundsPath(gift.id), {
        body: { amount: 30, refund_date: '2026-04-01' },
      }),
    ),
  );
  expect(responses.filter((response) => response.status === 201)).toHaveLength(3);
  const refused = responses.filter((response) => response.status !== 201);
  expect(refused).toHaveLength(9);
  for (const response of refused) {
    expect(response.status).toBe(422);
    expect(fieldErrors(response)).toEqual([{ param: 'amount', code: 'out_of_range' }]);
  }
  expect(await refundsOf(gift.id)).toBe(3);
  expect(await getGift(gift.id)).toMatchObject({
    amount_refunded: 90,
    net_amount: 10,
    designations: [{ fund_id: fund, amount: 100, amount_refunded: 90 }],
  });
  expect(await fundReceived(fund)).toBe(10);
});

test('split refunds racing for one fund’s part: that fund never gives back more than it holds', async () => {
  const [a, b] = [await createFund(), await createFund()];
  const gift = await createGift(100, [
    { fund_id: a, amount: 50 },
    { fund_id: b, amount: 50 },
  ]);
  const responses = await Promise.all(
    Array.from({ length: 8 }, () =>
      service.call('POST', refundsPath(gift.id), {
        body: { amount: 20, refund_date: '2026-04-01', designations: [{ fund_id: a, amount: 20 }] },
      }),
    ),
  );
  expect(responses.filter((response) => response.status === 201)).toHaveLength(2);
  for (const response of responses.filter((r) => r.status !== 201))
    expect(fieldErrors(response)).toEqual([
      { param: 'designations.0.amount', code: 'out_of_range' },
    ]);
  expect(await getGift(gift.id)).toMatchObject({
    amount_refunded: 40,
    designations: [
      { fund_id: a, amount: 50, amount_refunded: 40 },
      { fund_id: b, amount: 50, amount_refunded: 0 },
    ],
  });
  expect([await fundReceived(a), await fundReceived(b)]).toEqual([10, 50]);
});
