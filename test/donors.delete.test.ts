// Donor delete over HTTP, and the methods a donor does not have.
import {
  create,
  createGift,
  donorRow,
  expectError,
  service,
  setUpDonorTests,
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

test.each([
  ['PUT', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
  ['POST', '/api/v1/donors/1', 'GET, PATCH, DELETE'],
])('%s %s is 405 method_not_allowed with an Allow header', async (method, path, allow) => {
  const response = await service.call(method, path, { body: {} });
  expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
  expect(response.headers.get('Allow')).toBe(allow);
});
