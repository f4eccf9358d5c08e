// Receipt numbers under concurrency: many issues at once across two workers, and several issues
// racing for one gift.
import { sql } from 'slonik';
import { writesOf } from '../common/queue.js';
import { holdRow } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import type { ErrorEnvelope } from './helpers/threeWays.js';

const ISSUES = 200;

let service: TestService;
let donorId: number;

const newGifts = (count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, index) =>
      created<{ id: number }>(
        service.call('POST', '/api/v1/gifts', {
          body: {
            donor_id: donorId,
            amount: 10 + index,
            subject: `Gift ${index}`,
            gift_date: '2026-01-15',
          },
        }),
      ),
    ),
  );

const numbersOf = async () =>
  (
    await service.db.anyFirst(
      sql.unsafe`SELECT number FROM receipts WHERE institution_id = ${service.tenant.institutionId} ORDER BY number`,
    )
  ).map(Number);

beforeAll(async () => {
  service = await startTestService();
  await service.startWorker();
  donorId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: { role: 'Individual', first_name: 'C', last_name: 'C', email: 'c@example.org' },
      }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

test(`${ISSUES} issues at once across two workers get exactly the numbers 1..${ISSUES}`, async () => {
  expect(service.workers).toHaveLength(2);
  const gifts = await newGifts(ISSUES);
  const issuedBy = service.workers.map(() => 0);
  const holding = service.workers.map(() => 0);
  service.workers.forEach(({ worker }, index) => {
    for (const shard of worker.shards) {
      shard.on('active', () => (holding[index]! += 1));
      shard.on('completed', (job) => {
        for (const write of writesOf(job.data))
          if (write.command === 'receipts.create') issuedBy[index]! += 1;
      });
    }
  });
  // The institution's number row, as before its first receipt, held while the issues go out: each
  // worker's jobs wait in their transactions, and once one worker holds as many jobs as it runs at
  // once, the next job is the other's. Issues go in tens until both hold some, then the rest.
  const { institutionId } = service.tenant;
  await service.db.query(sql.unsafe`
    INSERT INTO receipt_numbers (institution_id, last_number) VALUES (${institutionId}, 0)`);
  const issue = (some: typeof gifts) =>
    some.map(({ id }) =>
      service.call<{ number: number; gift_id: number }>('POST', '/api/v1/receipts', {
        body: { gift_id: id },
      }),
    );
  const sent: ReturnType<typeof issue> = [];
  const hold = await holdRow(service.db, 'receipt_numbers', institutionId, 'institution_id');
  try {
    while (sent.length < ISSUES && !holding.every((jobs) => jobs > 0)) {
      const jobs = holding.reduce((sum, count) => sum + count, 0);
      sent.push(...issue(gifts.slice(sent.length, sent.length + 10)));
      await waitFor(
        () => holding.reduce((sum, count) => sum + count, 0) > jobs,
        5_000,
        'the next job in a worker',
      );
    }
    sent.push(...issue(gifts.slice(sent.length)));
  } finally {
    await hold.release();
  }
  const answers = await Promise.all(sent);
  expect(answers.map((answer) => answer.status)).toEqual(gifts.map(() => 201));
  const answered = answers.map((answer) => answer.body.number).sort((a, b) => a - b);
  const expected = Array.from({ length: ISSUES }, (_, index) => index + 1);
  expect(answered).toEqual(expected);
  expect(await numbersOf()).toEqual(expected);
  expect(
    await service.db.oneFirst(
      sql.unsafe`SELECT last_number FROM receipt_numbers WHERE institution_id = ${service.tenant.institutionId}`,
    ),
  ).toBe(ISSUES);
  // Both workers issued: each took numbers in transactions of its own database pool.
  expect(issuedBy.every((count) => count > 0)).toBe(true);
  expect(issuedBy.reduce((sum, count) => sum + count, 0)).toBe(ISSUES);
  // Each gift has its one receipt, with the number its answer named.
  const byGift = new Map(answers.map((answer) => [answer.body.gift_id, answer.body.number]));
  expect([...byGift.keys()].sort((a, b) => a - b)).toEqual(
    gifts.map((gift) => gift.id).sort((a, b) => a - b),
  );
});

test('issues racing for one gift: one receipt, the others already_in_use, and no number lost', async () => {
  const before = (await numbersOf()).length;
  const [gift] = await newGifts(1);
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      service.call('POST', '/api/v1/receipts', { body: { gift_id: gift!.id } }),
    ),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  expect(statuses).toEqual([201, ...Array.from({ length: 9 }, () => 422)]);
  for (const answer of answers.filter((a) => a.status === 422))
    expect((answer.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'gift_id', code: 'already_in_use', message: expect.any(String) },
    ]);
  expect(await numbersOf()).toEqual(Array.from({ length: before + 1 }, (_, index) => index + 1));
});
