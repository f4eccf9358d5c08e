// A gift in another currency whose rate is looked up by date commits in one statement once the
// worker has found that rate (a hint); the statement holds only while the hinted rate is still
// the one in effect, so a rate added, deleted or replaced since is never missed.
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { newDonor } from './helpers/singleStatement.js';

interface Gift {
  id: number;
  currency: string;
  exchange_rate: number;
  base_amount: number;
}

let service: TestService;
let donorId: number;

const postRate = (currency: string, rate: number, effective_on: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/exchange-rates', { body: { currency, rate, effective_on } }),
  );

const deleteRate = async (id: number) =>
  expect((await service.call('DELETE', `/api/v1/exchange-rates/${id}`)).status).toBe(200);

const postGift = (body: Record<string, unknown>) =>
  created<Gift>(
    service.call('POST', '/api/v1/gifts', {
      body: { donor_id: donorId, amount: 100, subject: 'Gala', gift_date: '2026-05-10', ...body },
    }),
  );

/** The gift as stored, not as answered: what every total sums. */
const stored = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT currency, exchange_rate::text AS rate, base_amount::text AS base FROM gifts
    WHERE id = ${id}`);

beforeAll(async () => {
  service = await startTestService();
  donorId = (await newDonor(service)).id;
});

afterAll(async () => {
  await service?.close();
});

test('a repeat of a looked-up rate takes it; a rate replaced, added or deleted since is the one taken', async () => {
  const first = await postRate('CHF', 1.1, '2026-05-01');
  const gifts = [await postGift({ currency: 'CHF' }), await postGift({ currency: 'CHF' })];
  for (const gift of gifts)
    expect(await stored(gift.id)).toEqual({ currency: 'CHF', rate: '1.100000', base: '110.00' });

  // Replaced on the same day: the hint (1.1) is stale.
  await deleteRate(first.id);
  const replaced = await postRate('CHF', 1.2, '2026-05-01');
  const afterReplace = await postGift({ currency: 'CHF' });
  expect([afterReplace.exchange_rate, afterReplace.base_amount]).toEqual([1.2, 120]);
  expect(await stored(afterReplace.id)).toEqual({
    currency: 'CHF',
    rate: '1.200000',
    base: '120.00',
  });

  // A later rate still on or before the gift's date wins over the hint.
  await postGift({ currency: 'CHF' });
  await postRate('CHF', 1.25, '2026-05-05');
  const afterNewer = await postGift({ currency: 'CHF' });
  expect(await stored(afterNewer.id)).toEqual({
    currency: 'CHF',
    rate: '1.250000',
    base: '125.00',
  });

  // A rate after the gift's date changes nothing.
  await postRate('CHF', 9.99, '2026-05-11');
  const afterLater = await postGift({ currency: 'CHF' });
  expect(await stored(afterLater.id)).toEqual({
    currency: 'CHF',
    rate: '1.250000',
    base: '125.00',
  });

  // Every rate on or before the date deleted: none in effect, and nothing written.
  const [newest] = await service.db.anyFirst(sql.unsafe`
    SELECT id FROM exchange_rates WHERE currency = 'CHF' AND effective_on = '2026-05-05'`);
  await deleteRate(Number(newest));
  await deleteRate(replaced.id);
  const before = await service.count('gifts', service.tenant.institutionId);
  const refused = await service.call<{ error: { errors: { param: string; code: string }[] } }>(
    'POST',
    '/api/v1/gifts',
    {
      body: {
        donor_id: donorId,
        amount: 100,
        subject: 'Gala',
        gift_date: '2026-05-10',
        currency: 'CHF',
      },
    },
  );
  expect(refused.status).toBe(422);
  expect(refused.body.error.errors).toEqual([
    expect.objectContaining({ param: 'currency', code: 'exchange_rate_missing' }),
  ]);
  expect(await service.count('gifts', service.tenant.institutionId)).toBe(before);
});
