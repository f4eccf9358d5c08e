import {
  expectError,
  foreignUser,
  service,
  setUpUserTests,
  userRow,
  type Body,
} from './helpers/users.js';

setUpUserTests();

describe('users that cannot be reached answer 404 resource_not_found', () => {
  const targets: [string, () => string][] = [
    ['an unknown id', () => '987654321'],
    ['a non-numeric id', () => 'me'],
    ['a negative id', () => '-1'],
    ["another institution's user", () => String(foreignUser.id)],
  ];
  const calls: [string, string, string, Body | undefined][] = [
    ['GET', 'GET', '', undefined],
    ['PATCH', 'PATCH', '', { first_name: 'Changed' }],
    ['PATCH dry run', 'PATCH', '?dry_run=true', { first_name: 'Changed' }],
  ];
  const cases = targets.flatMap(([target, id]) =>
    calls.map(([label, method, query, body]) => ({ target, id, label, method, query, body })),
  );

  test.each(cases)('$label of $target', async ({ id, method, query, body }) => {
    const foreignBefore = await userRow(foreignUser.id);
    const response = await service.call(method, `/api/v1/users/${id()}${query}`, { body });
    const error = expectError(response, 404, 'invalid_request_error', 'resource_not_found');
    expect(error.message).toEqual(expect.any(String));
    expect(await userRow(foreignUser.id)).toEqual(foreignBefore);
  });
});
