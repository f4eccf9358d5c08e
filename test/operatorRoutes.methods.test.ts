// The routes outside /api/v1 answer a method they do not serve with 405 and Allow, in the envelope.
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const paths = ['/health', '/ready', '/metrics', '/docs', '/api/v1/openapi.json'];

describe.each(paths)('%s', (path) => {
  test.each(['POST', 'PUT', 'PATCH', 'DELETE'])('%s is 405 with Allow: GET', async (method) => {
    const response = await fetch(`${service.url}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET');
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'method_not_allowed',
      request_id: response.headers.get('Request-Id'),
    });
  });

  test('GET still answers', async () => {
    const response = await fetch(`${service.url}${path}`);
    expect(response.status).toBeLessThan(300);
    // Read to the end: a body left unread keeps its connection open after the file ends.
    expect((await response.text()).length).toBeGreaterThan(0);
  });
});
