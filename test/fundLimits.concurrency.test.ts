import { sql } from 'slonik';
import { configEnv, spawnEntry, waitForLog } from './helpers/processes.js';
import { holdRow } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';
import { openWriteQueue } from './helpers/writeQueue.js';
import {
  awardBody,
  committedInDatabase,
  createAward,
  fieldErrors,
  fundWithScholarship,
  insufficient,
  newStudents,
  post,
  service,
  setUpFundLimitTests,
  totals,
  type Award,
  type ErrorEnvelope,
} from './helpers/fundLimits.js';

setUpFundLimitTests();

describe('the limit holds under concurrent writes (two workers)', () => {
  test('50 concurrent creates of 1000 on a fund limited to 10000: 10 awards, 40 clean refusals, totals add up', async () => {
    expect(service.workers).toHaveLength(2);
    const { fund, scholarship } = await fundWithScholarship(10_000);
    const students = await newStudents(50);
    const responses = await Promise.all(
      students.map((student) =>
        service.call('POST', '/api/v1/awards', { body: awardBody(scholarship, student, 1000) }),
      ),
    );
    const accepted = responses.filter((response) => response.status === 201);
    const refused = responses.filter((response) => response.status !== 201);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const response of refused) {
      expect(response.status).toBe(422);
      expect((response.body as unknown as ErrorEnvelope).error.code).toBe('validation_failed');
      expect(fieldErrors(response)).toEqual(insufficient('amount'));
    }
    const live = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM awards WHERE scholarship_id = ${scholarship}`,
    );
    expect(live).toBe(10);
    expect(await committedInDatabase(fund)).toBe('10000.00');
    expect(await totals(fund)).toEqual({
      gifts_received: 0,
      awards_committed: 10_000,
      award_capacity_remaining: 0,
      pledged_outstanding: 0,
    });
  });

  test('the same holds with two separate worker processes doing the writes', async () => {
    // The in-process workers step aside; two real `worker` processes take every job, one at a
    // time each, so that while the fund's row is held each can hold only one.
    await Promise.all(service.workers.map((running) => running.worker.pause()));
    const env = { ...configEnv(service.config), WORKER_CONCURRENCY: '1' };
    const processes = [0, 1].map(() => spawnEntry('worker/main.js', env));
    const queue = openWriteQueue(service.config, service.tenant.institutionId);
    try {
      await Promise.all(processes.map((proc) => waitForLog(proc, 'worker ready')));
      const { fund, scholarship } = await fundWithScholarship(10_000);
      const students = await newStudents(50);
      const send = (some: number[]) =>
        Promise.all(
          some.map((student) =>
            service.call('POST', '/api/v1/awards', {
              body: awardBody(scholarship, student, 1000),
            }),
          ),
        );
      // With the fund's row held, the first process to take a job waits on it; requests sent
      // after that are another job, which only the other process is free to take.
      const hold = await holdRow(service.db, 'funds', fund);
      let responses;
      try {
        const first = send(students.slice(0, 25));
        await waitFor(async () => (await queue.getActiveCount()) >= 1, 10_000, 'a first job');
        const second = send(students.slice(25));
        await waitFor(
          async () => (await queue.getActiveCount()) === 2,
          10_000,
          'a job in each process',
        );
        responses = [first, second];
      } finally {
        await hold.release();
      }
      const answered = (await Promise.all(responses)).flat();
      expect(answered.filter((response) => response.status === 201)).toHaveLength(10);
      const refused = answered.filter((response) => response.status !== 201);
      expect(refused).toHaveLength(40);
      for (const response of refused) expect(fieldErrors(response)).toEqual(insufficient('amount'));
      expect(await committedInDatabase(fund)).toBe('10000.00');
    } finally {
      await queue.close();
      for (const proc of processes) proc.child.kill('SIGTERM');
      await Promise.all(processes.map((proc) => proc.exited));
      for (const running of service.workers) running.worker.resume();
    }
  });

  test('10 concurrent increases of 500 with room for 4: exactly 4 are applied', async () => {
    const { fund, scholarship } = await fundWithScholarship(7000);
    const students = await newStudents(10);
    const awards = await Promise.all(
      students.map((student) =>
        post<Award>('/api/v1/awards', awardBody(scholarship, student, 500)),
      ),
    );
    const responses = await Promise.all(
      awards.map((award) =>
        service.call('PATCH', `/api/v1/awards/${award.id}`, { body: { amount: 1000 } }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 422, 422, 422, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(fieldErrors(response)).toEqual(insufficient('amount'));
    }
    const amounts = await service.db.manyFirst(
      sql.unsafe`SELECT amount::text FROM awards WHERE scholarship_id = ${scholarship} ORDER BY awards.amount`,
    );
    expect(amounts).toEqual([...Array(6).fill('500.00'), ...Array(4).fill('1000.00')]);
    expect(await committedInDatabase(fund)).toBe('7000.00');
    expect((await totals(fund)).award_capacity_remaining).toBe(0);
  });

  test.each([0, 7, 19])(
    'lowering the limit from 10000 to 5000 amid 20 concurrent creates of 1000 (sent as request %i): the limit is never exceeded',
    async (position) => {
      const { fund, scholarship } = await fundWithScholarship(10_000);
      const students = await newStudents(20);
      const creates = students.map((student) =>
        service.call('POST', '/api/v1/awards', { body: awardBody(scholarship, student, 1000) }),
      );
      const lower = service.call('PATCH', `/api/v1/funds/${fund}`, {
        body: { award_limit: 5000 },
      });
      const all = [...creates.slice(0, position), lower, ...creates.slice(position)];
      const responses = await Promise.all(all);
      const limitResponse = await lower;
      const createResponses = responses.filter((response) => response !== limitResponse);
      const successes = createResponses.filter((response) => response.status === 201).length;
      for (const response of createResponses.filter((r) => r.status !== 201)) {
        expect(response.status).toBe(422);
        expect(fieldErrors(response)).toEqual(insufficient('amount'));
      }

      const finalLimit = await service.db.oneFirst(
        sql.unsafe`SELECT award_limit::text FROM funds WHERE id = ${fund}`,
      );
      if (limitResponse.status === 200) {
        // The limit came down while at most 5000 was committed; the rest filled it exactly.
        expect(finalLimit).toBe('5000.00');
        expect(successes).toBe(5);
      } else {
        // More than 5000 was committed first; the lowering was refused and the fund filled up.
        expect(limitResponse.status).toBe(422);
        expect(fieldErrors(limitResponse)).toEqual(insufficient('award_limit'));
        expect(finalLimit).toBe('10000.00');
        expect(successes).toBe(10);
      }
      expect(await committedInDatabase(fund)).toBe(`${successes * 1000}.00`);
      const fundTotals = await totals(fund);
      expect(fundTotals.awards_committed + (fundTotals.award_capacity_remaining ?? NaN)).toBe(
        Number(finalLimit),
      );
    },
  );

  test('concurrent moves of two scholarships into one fund cannot overfill it together', async () => {
    const target = await fundWithScholarship(1000);
    const a = await fundWithScholarship(null);
    const b = await fundWithScholarship(null);
    await createAward(a.scholarship, 600);
    await createAward(b.scholarship, 600);
    const responses = await Promise.all(
      [a, b].map(({ scholarship }) =>
        service.call('PATCH', `/api/v1/scholarships/${scholarship}`, {
          body: { fund_id: target.fund },
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 422]);
    const refused = responses.find((response) => response.status === 422);
    expect(refused && fieldErrors(refused)).toEqual(insufficient('fund_id'));
    expect(await committedInDatabase(target.fund)).toBe('600.00');
  });
});
