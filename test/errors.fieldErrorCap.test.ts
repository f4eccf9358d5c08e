// A 422 lists every problem up to 100, and says how many there were: a body of thousands of
// unknown fields does not make an answer of thousands of entries.
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

interface Envelope {
  error: {
    code: string;
    message: string;
    param: string;
    errors: Array<{ param: string; code: string }>;
  };
}

test('150 unknown fields: 422 listing the first 100, the message counting all 150', async () => {
  const body: Record<string, unknown> = {
    email: 'cap@example.org',
    first_name: 'Cap',
    last_name: 'Ped',
  };
  for (let index = 0; index < 150; index++) body[`extra_${String(index).padStart(3, '0')}`] = index;
  const response = await service.call<Envelope>('POST', '/api/v1/users', { body });
  expect(response.status).toBe(422);
  expect(response.body.error.code).toBe('validation_failed');
  expect(response.body.error.errors).toHaveLength(100);
  expect(response.body.error.errors[0]).toMatchObject({
    param: 'extra_000',
    code: 'unknown_field',
  });
  expect(response.body.error.param).toBe('extra_000');
  expect(response.body.error.message).toBe(
    'The request has 150 problems; the first 100 are listed.',
  );
  expect(await service.count('users')).toBe(0);
});

test('100 problems or fewer are all listed', async () => {
  const body: Record<string, unknown> = {
    email: 'cap2@example.org',
    first_name: 'Cap',
    last_name: 'Ped',
  };
  for (let index = 0; index < 3; index++) body[`extra_${index}`] = index;
  const response = await service.call<Envelope>('POST', '/api/v1/users', { body });
  expect(response.body.error.errors).toHaveLength(3);
  expect(response.body.error.message).toBe('The request has 3 invalid fields.');
});
