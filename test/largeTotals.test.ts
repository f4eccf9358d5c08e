// Totals read at any size: a donor's giving and a fund's totals add up past numeric(14,2).
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

test('a donor and a fund whose gifts sum past 10^12 still read, with the exact sum', async () => {
  const donor = await created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      body: {
        role: 'Foundation',
        organization_name: 'Very Large Foundation',
        email: 'big@example.org',
      },
    }),
  );
  const fund = await created<{ id: number }>(
    service.call('POST', '/api/v1/funds', { body: { name: 'Capital campaign', code: 'CAPITAL' } }),
  );
  const largest = 999_999_999_999.99;
  for (const day of ['2026-01-01', '2026-01-02', '2026-01-03']) {
    await created(
      service.call('POST', '/api/v1/gifts', {
        body: {
          donor_id: donor.id,
          fund_id: fund.id,
          amount: largest,
          subject: 'Gift',
          gift_date: day,
        },
      }),
    );
  }

  const donorRead = await service.call<{ giving: Record<string, unknown> }>(
    'GET',
    `/api/v1/donors/${donor.id}`,
  );
  expect(donorRead.status).toBe(200);
  expect(donorRead.body.giving).toEqual({
    total_amount: 2_999_999_999_999.97,
    gift_count: 3,
    first_gift_date: '2026-01-01',
    soft_credit_total: 0,
    soft_credit_count: 0,
    pledged_outstanding: 0,
    last_gift_date: '2026-01-03',
  });

  const fundRead = await service.call<{ totals: Record<string, unknown> }>(
    'GET',
    `/api/v1/funds/${fund.id}`,
  );
  expect(fundRead.status).toBe(200);
  expect(fundRead.body.totals).toMatchObject({ gifts_received: 2_999_999_999_999.97 });
});
