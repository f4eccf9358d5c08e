// One rule for a POST or PATCH without a body, on every route and whatever the headers:
// 400 invalid_json; `{}` is a body and is judged as one.
import { routeTable } from '../api/routes.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const writes = routeTable()
  .filter((route) => route.method === 'post' || route.method === 'patch')
  .map((route) => ({
    method: route.method.toUpperCase(),
    // An import names its resource in the query: without it, that is what is missing.
    path: `/api/v1${route.path.replace(':id', '1')}${route.path === '/imports' ? '?resource=donors' : ''}`,
  }));

const headerSets: Array<[string, Record<string, string>]> = [
  ['no Content-Type', {}],
  ['Content-Type: application/json', { 'Content-Type': 'application/json' }],
  ['Content-Type: text/plain', { 'Content-Type': 'text/plain' }],
];

describe.each(writes)('$method $path', ({ method, path }) => {
  test.each(headerSets)('no body, %s: 400 invalid_json', async (_name, headers) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { 'X-Service-API-Key': service.tenant.key, ...headers },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; type: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  test('a chunked body that turns out empty: 400 invalid_json', async () => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { 'X-Service-API-Key': service.tenant.key, 'Content-Type': 'application/json' },
      body: new ReadableStream({ start: (controller) => controller.close() }),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_json',
    );
  });
});
