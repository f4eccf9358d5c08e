import { fieldErrors, type ErrorEnvelope } from './helpers/threeWays.js';
import { fundRow, ids, service, setUpFundTests } from './helpers/funds.js';

setUpFundTests();

describe('a fund that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ['a negative id', () => '-1'],
    ["another institution's fund", () => String(ids.otherFund)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { name: 'Hijack' }],
    ['PATCH', '?dry_run=true', { name: 'Hijack' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/funds/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's fund is untouched, and cannot be used for a gift", async () => {
    expect(await fundRow(ids.otherFund)).toMatchObject({ name: 'Their fund', code: 'THEIRS' });
    const gift = await service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount: 3,
        subject: 'Wrong fund',
        gift_date: '2026-01-03',
        fund_id: ids.otherFund,
      },
    });
    expect(gift.status).toBe(422);
    expect(fieldErrors(gift)).toEqual([{ param: 'fund_id', code: 'reference_not_found' }]);
  });
});
