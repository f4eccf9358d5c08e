// Donor delete, records that cannot be reached (404 on every method) and the methods a donor lacks.
import {
  create,
  createGift,
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

describe('DELETE /donors/{id}', () => {
  test('deletes the donor and answers {id, object, deleted}', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Short', last_name: 'Lived' });
    const response = await service.call('DELETE', `/api/v1/donors/${donor.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: donor.id, object: 'donor', deleted: true });
    expect(await donorRow(donor.id)).toBeNull();

    const fetched = await service.call('GET', `/api/v1/donors/${donor.id}`);
    expectError(fetched, 404, 'invalid_request_error', 'resource_not_found');
    const again = await service.call('DELETE', `/api/v1/donors/${donor.id}`);
    expectError(again, 404, 'invalid_request_error', 'resource_not_found');
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) answers like the delete and leaves the donor in place',
    async (_label, query, headers) => {
      const donor = await create({ role: 'Individual', first_name: 'Still', last_name: 'Here' });
      const rowBefore = await donorRow(donor.id);
      const response = await service.call('DELETE', `/api/v1/donors/${donor.id}${query}`, {
        headers,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: donor.id, object: 'donor', deleted: true });
      expect(await donorRow(donor.id)).toEqual(rowBefore);
      expect((await service.call('GET', `/api/v1/donors/${donor.id}`)).status).toBe(200);
    },
  );

  test('a donor with gifts is refused with 409 resource_in_use, for real and as a dry run', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Generous', last_name: 'Giver' });
    await createGift(donor.id, 50, '2026-03-01');
    for (const path of [`/api/v1/donors/${donor.id}`, `/api/v1/donors/${donor.id}?dry_run=true`]) {
      const response = await service.call('DELETE', path);
      expectError(response, 409, 'invalid_request_error', 'resource_in_use');
    }
    expect(await donorRow(donor.id)).not.toBeNull();
    expect(await service.count('gifts')).toBeGreaterThan(0);
  });
});

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

test.each([
  ['PUT', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
  ['POST', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
])('%s %s is 405 method_not_allowed with an Allow header', async (method, path, allow) => {
  const response = await service.call(method, path, { body: {} });
  expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
  expect(response.headers.get('Allow')).toBe(allow);
});
