import { Writable } from 'node:stream';
import { createLogger } from '../common/logger.js';
import { startTestService, type TestService } from './helpers/harness.js';

/** Every line the service logs during the test, as written. */
const lines: string[] = [];
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});
const logger = createLogger('info', capture);

let service: TestService;
beforeAll(async () => {
  service = await startTestService({}, { logger });
});
afterAll(async () => {
  await service?.close();
});

const email = (n: number) => `margaret.hamilton.${n}@apollo.example.org`;

test('a search by email, paged through, leaves neither the email nor a cursor in the log', async () => {
  for (const n of [1, 2, 3]) {
    const made = await service.call('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Margaret', last_name: 'Hamilton', email: email(n) },
    });
    expect(made.status).toBe(201);
  }
  const cursors: string[] = [];
  let query = `q=${encodeURIComponent('margaret.hamilton')}&limit=1`;
  for (;;) {
    const page = await service.call<{
      data: { email: string }[];
      has_more: boolean;
      next_cursor: string | null;
    }>('GET', `/api/v1/donors?${query}`);
    expect(page.status).toBe(200);
    if (!page.body.has_more) break;
    cursors.push(page.body.next_cursor!);
    query = `q=${encodeURIComponent('margaret.hamilton')}&limit=1&starting_after=${page.body.next_cursor!}`;
  }
  expect(cursors.length).toBe(2);
  const exact = await service.call('GET', `/api/v1/donors?q=${encodeURIComponent(email(2))}`);
  expect(exact.status).toBe(200);
  // A refused write whose body holds the email, and a key sent in the clear.
  await service.call('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Margaret', last_name: 'Hamilton', email: email(1) },
  });
  await service.call('GET', `/api/v1/donors/${encodeURIComponent(email(3))}`);
  // What a database error carries of the row it refused.
  logger.error(
    {
      err: {
        message: 'duplicate key value violates unique constraint "donors_email_key"',
        detail: `Key (lower(email))=(${email(1)}) already exists.`,
        values: [email(1)],
      },
      body: { email: email(1) },
    },
    'a database error',
  );

  await new Promise((resolve) => setImmediate(resolve));
  const requests = lines.filter((line) => line.includes('"request completed"'));
  expect(requests.length).toBeGreaterThanOrEqual(8);
  const log = lines.join('\n');
  expect(log).not.toMatch(/margaret|hamilton|apollo/i);
  for (const cursor of cursors) expect(log).not.toContain(cursor);
  expect(log).not.toContain(service.tenant.key);
  // What the lines do say: the route template and the names of the query parameters.
  const search = requests.map(
    (line) => JSON.parse(line) as { req: { route: string; params: string[] } },
  );
  expect(search).toContainEqual(
    expect.objectContaining({
      req: { method: 'GET', route: '/api/v1/donors', params: ['q', 'limit', 'starting_after'] },
    }),
  );
  expect(log).toContain('"detail":"[redacted]"');
});
