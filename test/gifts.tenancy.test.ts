import { type ErrorEnvelope } from './helpers/threeWays.js';
import { giftRow, ids, other, service, setUpGiftTests, type Gift } from './helpers/gifts.js';

setUpGiftTests();

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
