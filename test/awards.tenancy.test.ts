import { type ErrorEnvelope } from './helpers/threeWays.js';
import { awardRow, ids, service, setUpAwardTests } from './helpers/awards.js';

setUpAwardTests();

describe('an award that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ["another institution's award", () => String(ids.otherAward)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { status: 'cancelled' }],
    ['PATCH', '?dry_run=true', { status: 'cancelled' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/awards/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's award is untouched", async () => {
    expect(await awardRow(ids.otherAward)).toMatchObject({ status: 'offered', amount: '10.00' });
  });
});
