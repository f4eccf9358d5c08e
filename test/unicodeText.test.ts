// Text is stored exactly as answered: a lone UTF-16 surrogate (which has no UTF-8 form, so
// Postgres would keep U+FFFD instead) is refused; real characters outside the BMP round-trip.
import { sql } from 'slonik';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const donors = () =>
  service.db.any(sql.unsafe`SELECT id, first_name, address FROM donors ORDER BY id`);
const person = {
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.org',
};

test.each([
  ['a high surrogate alone', { first_name: 'A\ud800B' }, 'first_name'],
  ['a low surrogate alone', { first_name: '\udc00' }, 'first_name'],
  ['a surrogate pair reversed', { last_name: 'x\udc00\ud800y' }, 'last_name'],
  ['a lone surrogate in a nested field', { address: { city: 'Leeds\ud83d' } }, 'address.city'],
  ['a lone surrogate in an email', { email: 'a\ud800@example.org' }, 'email'],
])(
  '%s: 422 invalid_value from the real call and both dry runs, nothing written',
  async (_name, fields, param) => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/donors',
      'POST',
      { ...person, ...fields },
      [{ param, code: 'invalid_value' }],
      donors,
    );
  },
);

test('characters outside the Basic Multilingual Plane are answered and stored exactly as sent', async () => {
  const name = 'Ada 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢';
  const created = await service.call<{ id: number; first_name: string }>('POST', '/api/v1/donors', {
    body: { ...person, first_name: name },
  });
  expect(created.status).toBe(201);
  expect(created.body.first_name).toBe(name);
  const read = await service.call<{ first_name: string }>(
    'GET',
    `/api/v1/donors/${created.body.id}`,
  );
  expect(read.body.first_name).toBe(name);
  expect(
    await service.db.oneFirst(
      sql.unsafe`SELECT first_name FROM donors WHERE id = ${created.body.id}`,
    ),
  ).toBe(name);
});
