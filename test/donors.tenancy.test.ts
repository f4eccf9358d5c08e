import {
  create,
  donorCount,
  donorRow,
  expectError,
  other,
  service,
  setUpDonorTests,
  type Body,
  type Donor,
} from './helpers/donors.js';

setUpDonorTests();

describe('records that cannot be reached answer 404 resource_not_found', () => {
  let foreignDonor: Donor;
  let foreignRow: unknown;
  beforeAll(async () => {
    foreignDonor = await create(
      {
        role: 'Individual',
        first_name: 'Foreign',
        last_name: 'Donor',
        email: 'foreign@example.org',
      },
      other.key,
    );
    foreignRow = await donorRow(foreignDonor.id);
  });

  const targets: [string, () => string][] = [
    ['an unknown id', () => '987654321'],
    ['a non-numeric id', () => 'abc'],
    ['a zero id', () => '0'],
    ['a fractional id', () => '1.5'],
    ['an id beyond the integer range', () => '99999999999999999999'],
    ["another institution's donor", () => String(foreignDonor.id)],
  ];
  const calls: [string, string, string, Body | undefined][] = [
    ['GET', 'GET', '', undefined],
    ['PATCH', 'PATCH', '', { phone: '123' }],
    ['PATCH dry run', 'PATCH', '?dry_run=true', { phone: '123' }],
    ['DELETE', 'DELETE', '', undefined],
    ['DELETE dry run', 'DELETE', '?dry_run=true', undefined],
  ];
  const cases = targets.flatMap(([target, id]) =>
    calls.map(([label, method, query, body]) => ({ target, id, label, method, query, body })),
  );

  test.each(cases)('$label of $target', async ({ id, method, query, body }) => {
    const before = await donorCount();
    const response = await service.call(method, `/api/v1/donors/${id()}${query}`, { body });
    expectError(response, 404, 'invalid_request_error', 'resource_not_found');
    expect(await donorCount()).toBe(before);
    expect(await donorRow(foreignDonor.id)).toEqual(foreignRow);
  });

  test('the other institution still sees its donor', async () => {
    const response = await service.call<Donor>('GET', `/api/v1/donors/${foreignDonor.id}`, {
      key: other.key,
    });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('foreign@example.org');
  });
});
