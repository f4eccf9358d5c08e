// Every answer to an authenticated request says what is left of its key's rate budget:
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, on successes and refusals alike.
import { startTestService, type TestService } from './helpers/harness.js';
import { sleep } from './helpers/wait.js';

const LIMIT = 5;
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_PER_SECOND: String(LIMIT) });
});

afterAll(async () => {
  await service?.close();
});

const budget = (headers: Headers) => ({
  limit: headers.get('RateLimit-Limit'),
  remaining: headers.get('RateLimit-Remaining'),
  reset: headers.get('RateLimit-Reset'),
});

test('the budget counts down request by request, and a 429 says it is spent', async () => {
  await sleep(1_100);
  const seen = [];
  for (let index = 0; index <= LIMIT; index++) {
    const response = await service.call('GET', '/api/v1/funds');
    seen.push({ status: response.status, ...budget(response.headers) });
  }
  expect(seen).toEqual([
    ...[4, 3, 2, 1, 0].map((remaining) => ({
      status: 200,
      limit: String(LIMIT),
      remaining: String(remaining),
      reset: '1',
    })),
    { status: 429, limit: String(LIMIT), remaining: '0', reset: '1' },
  ]);
});

test('a refusal after the key is known carries the budget too; a 401 cannot', async () => {
  await sleep(1_100);
  const invalid = await service.call('POST', '/api/v1/funds', { body: { name: '' } });
  expect(invalid.status).toBe(422);
  expect(budget(invalid.headers)).toEqual({ limit: String(LIMIT), remaining: '4', reset: '1' });
  const unauthenticated = await service.call('GET', '/api/v1/funds', { key: null });
  expect(unauthenticated.status).toBe(401);
  expect(budget(unauthenticated.headers)).toEqual({ limit: null, remaining: null, reset: null });
});

test('with the limit off (0) no budget is told', async () => {
  const unlimited = await startTestService({ RATE_LIMIT_PER_SECOND: '0' });
  try {
    const response = await unlimited.call('GET', '/api/v1/funds');
    expect(response.status).toBe(200);
    expect(budget(response.headers)).toEqual({ limit: null, remaining: null, reset: null });
  } finally {
    await unlimited.close();
  }
});
