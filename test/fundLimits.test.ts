import { sql } from 'slonik';
import { startTestService, type ApiResponse, type TestService } from './helpers/harness.js';
import { configEnv, spawnEntry, waitForLog } from './helpers/processes.js';

interface FieldErrorBody {
  param: string;
  code: string;
  message: string;
}

interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: FieldErrorBody[];
    request_id: string;
  };
}

interface Award {
  id: number;
  scholarship_id: number;
  student_id: number;
  amount: number;
  status: string;
}

interface Totals {
  gifts_received: number;
  awards_committed: number;
  award_capacity_remaining: number | null;
}

interface Fund {
  id: number;
  award_limit: number | null;
  totals?: Totals;
}

let service: TestService;
const ids = { cycle: 0, donor: 0 };
let counter = 0;

async function expectStatus<T>(response: Promise<ApiResponse<T>>, status: number): Promise<T> {
  const result = await response;
  if (result.status !== status)
    throw new Error(`expected ${status}, got ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

const post = <T = { id: number }>(path: string, body: Record<string, unknown>) =>
  expectStatus(service.call<T>('POST', path, { body }), 201);

const patch = <T = Record<string, unknown>>(path: string, body: Record<string, unknown>) =>
  expectStatus(service.call<T>('PATCH', path, { body }), 200);

/** A fund with the given limit (null: none) and one active scholarship drawing on it. */
async function fundWithScholarship(
  awardLimit: number | null,
): Promise<{ fund: number; scholarship: number }> {
  const fund = (
    await post('/api/v1/funds', {
      name: `Fund ${++counter}`,
      code: `F-${counter}`,
      award_limit: awardLimit,
    })
  ).id;
  const scholarship = await newScholarship(fund);
  return { fund, scholarship };
}

const newScholarship = async (fund: number) =>
  (await post('/api/v1/scholarships', { name: `Scholarship ${++counter}`, fund_id: fund })).id;

const newStudents = (count: number) =>
  Promise.all(
    Array.from({ length: count }, async () => {
      const n = ++counter;
      return (
        await post('/api/v1/students', {
          student_number: `S-${n}`,
          first_name: 'Ada',
          last_name: `Student ${n}`,
        })
      ).id;
    }),
  );

const awardBody = (scholarship: number, student: number, amount: number) => ({
  award_cycle_id: ids.cycle,
  scholarship_id: scholarship,
  student_id: student,
  amount,
});

const createAward = async (scholarship: number, amount: number) => {
  const [student] = await newStudents(1);
  return post<Award>('/api/v1/awards', awardBody(scholarship, student ?? 0, amount));
};

const totals = async (fund: number): Promise<Totals> => {
  const fetched = await expectStatus(service.call<Fund>('GET', `/api/v1/funds/${fund}`), 200);
  if (!fetched.totals) throw new Error('no totals');
  return fetched.totals;
};

/** What the database itself says the fund's live awards commit, as exact text. */
const committedInDatabase = (fund: number) =>
  service.db.oneFirst(sql.unsafe`
    SELECT coalesce(sum(a.amount), 0)::text FROM awards a
    JOIN scholarships s ON s.id = a.scholarship_id
    WHERE s.fund_id = ${fund} AND a.status IN ('offered', 'accepted', 'disbursed')`);

const fieldErrors = (response: ApiResponse) =>
  ((response.body as unknown as ErrorEnvelope).error.errors ?? []).map(({ param, code }) => ({
    param,
    code,
  }));

const withoutRequestId = (response: ApiResponse) => ({
  ...(response.body as unknown as ErrorEnvelope).error,
  request_id: undefined,
});

const snapshot = () =>
  service.db.any(sql.unsafe`
    SELECT 'award' AS kind, id, amount::text AS value, status, updated_at FROM awards
    UNION ALL SELECT 'fund', id, award_limit::text, status, updated_at FROM funds
    UNION ALL SELECT 'scholarship', id, fund_id::text, status, updated_at FROM scholarships
    ORDER BY kind, id`);

/**
 * A real call, a `?dry_run=true` call and a `Dry-Run: true` call of one refused write: all three
 * answer 422 validation_failed with exactly `expected`, and no award, fund or scholarship changes.
 */
async function expectRefusedThreeWays(
  method: 'POST' | 'PATCH',
  path: string,
  body: Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
): Promise<void> {
  const before = await snapshot();
  const real = await service.call(method, path, { body });
  const dryQuery = await service.call(method, `${path}?dry_run=true`, { body });
  const dryHeader = await service.call(method, path, { body, headers: { 'Dry-Run': 'true' } });
  expect(real.status).toBe(422);
  expect((real.body as unknown as ErrorEnvelope).error.code).toBe('validation_failed');
  expect(fieldErrors(real)).toEqual(expected);
  for (const dry of [dryQuery, dryHeader]) {
    expect(dry.status).toBe(422);
    expect(withoutRequestId(dry)).toEqual(withoutRequestId(real));
  }
  expect(await snapshot()).toEqual(before);
}

const insufficient = (param: string) => [{ param, code: 'insufficient_fund_balance' }];

beforeAll(async () => {
  service = await startTestService();
  // A second BullMQ worker with its own pool: concurrent writes really run in parallel.
  await service.startWorker();
  ids.cycle = (
    await post('/api/v1/award-cycles', {
      name: 'Limits cycle',
      starts_on: '2026-09-01',
      ends_on: '2027-06-30',
      status: 'open',
    })
  ).id;
  ids.donor = (
    await post('/api/v1/donors', {
      role: 'Individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.org',
    })
  ).id;
});

afterAll(async () => {
  await service?.close();
});

describe('award creates and the fund limit', () => {
  test('awards fill a fund up to its limit exactly; one cent more is refused three ways and nothing is written', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 600);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 400.01),
      insufficient('amount'),
    );
    await post('/api/v1/awards', awardBody(scholarship, student ?? 0, 400));
    expect(await totals(fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1000,
      award_capacity_remaining: 0,
    });
  });

  test('the refusal says what the fund has left', async () => {
    const { scholarship } = await fundWithScholarship(100);
    await createAward(scholarship, 40.5);
    const [student] = await newStudents(1);
    const refused = await service.call<ErrorEnvelope>('POST', '/api/v1/awards', {
      body: awardBody(scholarship, student ?? 0, 60),
    });
    expect(refused.body.error.errors?.[0]?.message).toContain('59.5 remains');
  });

  test('a limit of 0 refuses every award; no limit takes the largest amount', async () => {
    const zero = await fundWithScholarship(0);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(zero.scholarship, student ?? 0, 0.01),
      insufficient('amount'),
    );
    const unlimited = await fundWithScholarship(null);
    await createAward(unlimited.scholarship, 999_999_999_999.99);
    await createAward(unlimited.scholarship, 999_999_999_999.99);
    expect(await totals(unlimited.fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1_999_999_999_999.98,
      award_capacity_remaining: null,
    });
  });

  test('a refusal on amount is reported alongside every other problem of the body', async () => {
    const { scholarship } = await fundWithScholarship(10);
    const [student] = await newStudents(1);
    const response = await service.call('POST', '/api/v1/awards', {
      body: { ...awardBody(scholarship, student ?? 0, 50), status: 'accepted', note: 'x' },
    });
    expect(response.status).toBe(422);
    expect(fieldErrors(response)).toEqual([
      { param: 'note', code: 'unknown_field' },
      { param: 'status', code: 'invalid_value' },
      { param: 'amount', code: 'insufficient_fund_balance' },
    ]);
  });

  test('declined and cancelled awards free their amount; accepted and disbursed ones keep it', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const declined = await createAward(scholarship, 250);
    const cancelled = await createAward(scholarship, 250);
    const accepted = await createAward(scholarship, 250);
    const disbursed = await createAward(scholarship, 250);
    await patch(`/api/v1/awards/${accepted.id}`, { status: 'accepted' });
    await patch(`/api/v1/awards/${disbursed.id}`, { status: 'accepted' });
    await patch(`/api/v1/awards/${disbursed.id}`, { status: 'disbursed' });
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'accepted' });
    expect((await totals(fund)).award_capacity_remaining).toBe(0);

    await patch(`/api/v1/awards/${declined.id}`, { status: 'declined' });
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'cancelled' });
    expect(await totals(fund)).toEqual({
      gifts_received: 0,
      awards_committed: 500,
      award_capacity_remaining: 500,
    });
    await createAward(scholarship, 500);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 0.01),
      insufficient('amount'),
    );
  });

  test('gifts received count in totals but give no award capacity', async () => {
    const { fund, scholarship } = await fundWithScholarship(100);
    await post('/api/v1/gifts', {
      donor_id: ids.donor,
      amount: 5000,
      subject: 'Big gift',
      gift_date: '2026-05-01',
      fund_id: fund,
    });
    await createAward(scholarship, 60);
    expect(await totals(fund)).toEqual({
      gifts_received: 5000,
      awards_committed: 60,
      award_capacity_remaining: 40,
    });
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 41),
      insufficient('amount'),
    );
  });

  test('totals appear only on GET /funds/{id}, not in create or update answers', async () => {
    const created = await post<Fund>('/api/v1/funds', { name: 'No totals', code: 'NO-TOTALS' });
    expect(created).not.toHaveProperty('totals');
    const patched = await patch<Fund>(`/api/v1/funds/${created.id}`, { award_limit: 5 });
    expect(patched).not.toHaveProperty('totals');
    expect(await totals(created.id)).toEqual({
      gifts_received: 0,
      awards_committed: 0,
      award_capacity_remaining: 5,
    });
  });
});

describe('changes to an award and the fund limit', () => {
  test('raising an amount past the limit is refused three ways; up to the limit and any decrease are accepted', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const award = await createAward(scholarship, 500);
    await createAward(scholarship, 300);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/awards/${award.id}`,
      { amount: 700.01 },
      insufficient('amount'),
    );
    await patch(`/api/v1/awards/${award.id}`, { amount: 700 });
    expect((await totals(fund)).award_capacity_remaining).toBe(0);
    await patch(`/api/v1/awards/${award.id}`, { amount: 100 });
    expect((await totals(fund)).award_capacity_remaining).toBe(600);
  });

  test('in a full fund an award can still be accepted, disbursed, lowered or moved to a scholarship on the same fund', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const sibling = await newScholarship(fund);
    const award = await createAward(scholarship, 1000);
    await patch(`/api/v1/awards/${award.id}`, { status: 'accepted', amount: 1000 });
    await patch(`/api/v1/awards/${award.id}`, { scholarship_id: sibling });
    await patch(`/api/v1/awards/${award.id}`, { status: 'disbursed', amount: 999 });
    expect((await totals(fund)).awards_committed).toBe(999);
  });

  test('moving an award to a scholarship on another fund is checked against that fund', async () => {
    const from = await fundWithScholarship(null);
    const small = await fundWithScholarship(400);
    const roomy = await fundWithScholarship(500);
    const award = await createAward(from.scholarship, 500);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/awards/${award.id}`,
      { scholarship_id: small.scholarship },
      insufficient('amount'),
    );
    await patch(`/api/v1/awards/${award.id}`, { scholarship_id: roomy.scholarship });
    expect((await totals(from.fund)).awards_committed).toBe(0);
    expect((await totals(roomy.fund)).award_capacity_remaining).toBe(0);
  });

  test('a declined award does not draw on the fund, whatever its amount becomes', async () => {
    const { fund, scholarship } = await fundWithScholarship(100);
    const award = await createAward(scholarship, 100);
    await patch(`/api/v1/awards/${award.id}`, { status: 'declined' });
    await patch(`/api/v1/awards/${award.id}`, { amount: 5000 });
    expect((await totals(fund)).awards_committed).toBe(0);
  });
});

describe('fund award_limit changes', () => {
  test('lowering the limit below what live awards commit is refused three ways; down to it is accepted', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 350);
    await createAward(scholarship, 250.5);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/funds/${fund}`,
      { award_limit: 600.49 },
      insufficient('award_limit'),
    );
    const lowered = await patch<Fund>(`/api/v1/funds/${fund}`, { award_limit: 600.5 });
    expect(lowered.award_limit).toBe(600.5);
    expect((await totals(fund)).award_capacity_remaining).toBe(0);
    await patch(`/api/v1/funds/${fund}`, { award_limit: null });
    expect((await totals(fund)).award_capacity_remaining).toBeNull();
  });

  test('setting a limit on an unlimited fund is checked the same way', async () => {
    const { fund, scholarship } = await fundWithScholarship(null);
    await createAward(scholarship, 800);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/funds/${fund}`,
      { award_limit: 0 },
      insufficient('award_limit'),
    );
    await patch(`/api/v1/funds/${fund}`, { award_limit: 800 });
  });

  test('cancelled awards do not hold the limit up', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const award = await createAward(scholarship, 900);
    await patch(`/api/v1/awards/${award.id}`, { status: 'cancelled' });
    await patch(`/api/v1/funds/${fund}`, { award_limit: 0 });
  });

  test('a limit refusal is reported with the fund’s other problems', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 10);
    const response = await service.call('PATCH', `/api/v1/funds/${fund}`, {
      body: { award_limit: 5, name: '' },
    });
    expect(fieldErrors(response)).toEqual([
      { param: 'name', code: 'required' },
      { param: 'award_limit', code: 'insufficient_fund_balance' },
    ]);
  });
});

describe('moving a scholarship to another fund moves what its live awards commit', () => {
  test('refused three ways when the new fund lacks room; accepted when it has it, and totals move', async () => {
    const from = await fundWithScholarship(null);
    const award = await createAward(from.scholarship, 700);
    const cancelled = await createAward(from.scholarship, 5000);
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'cancelled' });

    const tight = await fundWithScholarship(1000);
    await createAward(tight.scholarship, 400);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/scholarships/${from.scholarship}`,
      { fund_id: tight.fund },
      insufficient('fund_id'),
    );

    const roomy = await fundWithScholarship(1000);
    await createAward(roomy.scholarship, 300);
    await patch(`/api/v1/scholarships/${from.scholarship}`, { fund_id: roomy.fund });
    expect((await totals(from.fund)).awards_committed).toBe(0);
    expect(await totals(roomy.fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1000,
      award_capacity_remaining: 0,
    });
    expect(award.amount).toBe(700);
  });

  test('a scholarship without live awards may move to a full fund', async () => {
    const full = await fundWithScholarship(100);
    await createAward(full.scholarship, 100);
    const empty = await fundWithScholarship(null);
    await patch(`/api/v1/scholarships/${empty.scholarship}`, { fund_id: full.fund });
  });
});

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
    });
  });

  test('the same holds with two separate worker processes doing the writes', async () => {
    // The in-process workers step aside; two real `worker` processes take every job.
    await Promise.all(service.workers.map((running) => running.worker.pause()));
    const processes = [0, 1].map(() => spawnEntry('worker/main.js', configEnv(service.config)));
    try {
      await Promise.all(processes.map((proc) => waitForLog(proc, 'worker ready')));
      const { fund, scholarship } = await fundWithScholarship(10_000);
      const students = await newStudents(50);
      const responses = await Promise.all(
        students.map((student) =>
          service.call('POST', '/api/v1/awards', { body: awardBody(scholarship, student, 1000) }),
        ),
      );
      expect(responses.filter((response) => response.status === 201)).toHaveLength(10);
      const refused = responses.filter((response) => response.status !== 201);
      expect(refused).toHaveLength(40);
      for (const response of refused) expect(fieldErrors(response)).toEqual(insufficient('amount'));
      expect(await committedInDatabase(fund)).toBe('10000.00');
      // Both processes took part.
      for (const proc of processes) {
        expect(proc.stdout.some((line) => line.includes('"job done"'))).toBe(true);
      }
    } finally {
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
