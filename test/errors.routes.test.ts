// Error answers: a Request-Id on every answer, unknown paths and wrong methods.
import { expectError, refused, send, setUpErrorTests, validDonor } from './helpers/errors.js';

setUpErrorTests();

describe('Request-Id', () => {
  test.each([
    ['GET', '/health', null],
    ['GET', '/ready', null],
    ['GET', '/api/v1/institution', undefined],
  ] as const)('a successful %s %s carries a Request-Id header', async (method, path, key) => {
    const response = await send(method, path, { key });
    expect(response.status).toBe(200);
    expect(response.headers['request-id']).toMatch(/^req_\w+$/);
  });

  test('a create, its dry run and its idempotent replay each carry a Request-Id of their own', async () => {
    const body = validDonor();
    const dryRun = await send('POST', '/api/v1/donors?dry_run=true', { json: body });
    const created = await send('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': 'request-id-1' },
    });
    const replayed = await send('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': 'request-id-1' },
    });
    expect([dryRun.status, created.status, replayed.status]).toEqual([201, 201, 201]);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const ids = [dryRun, created, replayed].map((response) => response.headers['request-id']);
    for (const id of ids) expect(id).toMatch(/^req_\w+$/);
    expect(new Set(ids).size).toBe(3);
  });

  test('a Request-Id sent by the client is not echoed back as ours', async () => {
    const response = await send('GET', '/api/v1/nope', {
      headers: { 'Request-Id': 'req_client_chosen' },
    });
    const error = expectError(response, 404, 'invalid_request_error', 'route_not_found');
    expect(error.request_id).not.toBe('req_client_chosen');
  });
});

describe('routes and methods', () => {
  test.each([
    ['GET', '/', null],
    ['GET', '/nope', null],
    ['GET', '/api/v2/donors', null],
    ['POST', '/api/v2/donors', null],
    ['GET', '/api/v1/nope', undefined],
    ['GET', '/api/v1/donors/1/gifts', undefined],
    ['GET', '/api/v1/%E0%A4%A', undefined],
  ] as const)('%s %s answers 404 route_not_found', async (method, path, key) => {
    const error = expectError(
      await send(method, path, { key }),
      404,
      'invalid_request_error',
      'route_not_found',
    );
    expect(error.param).toBeUndefined();
  });

  test('a path parameter that cannot be percent-decoded is an unknown path, not a 500', async () => {
    expectError(
      await send('GET', '/api/v1/donors/%E0%A4%A'),
      404,
      'invalid_request_error',
      'route_not_found',
    );
  });

  test('an unknown path under /api/v1 without a key is refused before the route is looked up', async () => {
    expectError(
      await send('GET', '/api/v1/nope', { key: null }),
      401,
      'authentication_error',
      'missing_api_key',
    );
  });

  test.each([
    ['DELETE', '/api/v1/institution', ['GET', 'PATCH']],
    ['PUT', '/api/v1/institution', ['GET', 'PATCH']],
    ['OPTIONS', '/api/v1/institution', ['GET', 'PATCH']],
    ['PUT', '/api/v1/donors/1', ['GET', 'PATCH', 'DELETE']],
    ['POST', '/api/v1/donors/1', ['GET', 'PATCH', 'DELETE']],
    ['PUT', '/api/v1/gifts/1', ['GET', 'PATCH', 'DELETE']],
  ])('%s %s answers 405 method_not_allowed with an Allow header', async (method, path, allowed) => {
    const response = await refused(method, path, { json: validDonor() });
    expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
    const allow = String(response.headers.allow ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== 'HEAD');
    expect(allow.sort()).toEqual([...allowed].sort());
  });

  // Route and method are decided before the body: a client who used the wrong path or method
  // should be told so, not that the body it sent there was not JSON.
  test('an unknown path answers 404 even when the body is not JSON', async () => {
    const response = await send('POST', '/api/v1/nope', {
      raw: 'hello',
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(response, 404, 'invalid_request_error', 'route_not_found');
  });

  test('a wrong method answers 405 even when the body is malformed JSON', async () => {
    const response = await send('POST', '/api/v1/institution', {
      raw: '{',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
  });
});
