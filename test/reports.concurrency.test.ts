// The reports' month rows under writes that race (fundraising.md §5): gifts, refunds and voids of
// donors who join, leave and change households at the same moment, on two workers. However they
// interleave, the rows, and each unit's first month, equal a recomputation from the gifts and the
// donors as they end.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { rebuildStaleGivingYears } from '../common/reports/givingYears.js';
import { givingYearsDrift } from './helpers/givingYears.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
  await service.startWorker();
});

afterAll(async () => {
  await service?.close();
});

const call = <T = { id: number }>(method: string, path: string, body?: unknown) =>
  service.call<T>(method, `/api/v1${path}`, {
    body,
    headers: body === undefined ? {} : { 'Idempotency-Key': randomUUID() },
  });

const monthRow = z.object({
  level: z.string(),
  unit_id: z.number(),
  month: z.string(),
  total: z.string(),
  gift_count: z.number(),
});
const firstMonth = monthRow.pick({ level: true, unit_id: true, month: true });

test('gifts, refunds and voids racing household joins and leaves leave every month row equal to a recomputation from the gifts', async () => {
  const households: number[] = [];
  for (const name of ['North', 'South']) {
    const created = await call('POST', '/donors', { role: 'Household', last_name: name });
    expect(created.status).toBe(201);
    households.push(created.body.id);
  }
  const people: number[] = [];
  for (let n = 0; n < 3; n++) {
    const created = await call('POST', '/donors', {
      role: 'Individual',
      first_name: 'Racing',
      last_name: String(n),
    });
    expect(created.status).toBe(201);
    people.push(created.body.id);
  }
  const gifts = await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      call('POST', '/gifts', {
        donor_id: people[n % people.length],
        amount: 10 + n,
        subject: 'Racing gift',
        gift_date: `2026-0${1 + (n % 6)}-15`,
      }),
    ),
  );
  for (const gift of gifts) expect(gift.status).toBe(201);

  const writes: Promise<{ status: number }>[] = [];
  for (let round = 0; round < 6; round++) {
    for (const [n, person] of people.entries()) {
      const household = [households[0], households[1], null][(round + n) % 3];
      writes.push(call('PATCH', `/donors/${person}`, { household_id: household }));
      writes.push(
        call('POST', '/gifts', {
          donor_id: person,
          amount: 5,
          subject: 'Racing gift',
          gift_date: `2026-0${1 + ((round + n) % 6)}-20`,
        }),
      );
    }
    const gift = gifts[round]!.body.id;
    writes.push(
      round % 2
        ? call('POST', `/gifts/${gift}/void`, { reason: 'Racing' })
        : call('POST', `/gifts/${gift}/refunds`, { amount: 3, refund_date: '2026-07-01' }),
    );
  }
  const answers = await Promise.all(writes);
  for (const answer of answers) expect([200, 201]).toContain(answer.status);

  const institutionId = service.tenant.institutionId;
  const kept = await service.db.any(sql.type(monthRow)`
    SELECT level, unit_id, month::text, total::text, gift_count FROM giving_months
    WHERE institution_id = ${institutionId} ORDER BY level, unit_id, month`);
  const recomputed = await service.db.any(sql.type(monthRow)`
    SELECT u.level, u.unit_id, date_trunc('month', g.gift_date)::date::text AS month,
           sum(g.base_amount - g.base_amount_refunded)::text AS total, count(*)::int AS gift_count
    FROM gifts g JOIN donors d ON d.institution_id = g.institution_id AND d.id = g.donor_id
    CROSS JOIN LATERAL (VALUES ('donor', g.donor_id),
                               ('household', coalesce(d.household_id, g.donor_id))) AS u(level, unit_id)
    WHERE g.institution_id = ${institutionId} AND g.status = 'posted'
      AND g.base_amount > g.base_amount_refunded
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
  expect(recomputed.length).toBeGreaterThan(0);
  expect(kept).toEqual(recomputed);
  // Each unit's first month (what retention counts new units by) is its first month row's.
  const firstMonths = sql.type(firstMonth)`
    SELECT level, unit_id, month::text FROM giving_first_months
    WHERE institution_id = ${institutionId} ORDER BY level, unit_id`;
  const firsts = recomputed.filter(
    (row, n) =>
      n === 0 ||
      recomputed[n - 1]!.level !== row.level ||
      recomputed[n - 1]!.unit_id !== row.unit_id,
  );
  expect(await service.db.any(firstMonths)).toEqual(
    firsts.map(({ level, unit_id, month }) => ({ level, unit_id, month })),
  );
  // And the fiscal years retention reads are those months' sums.
  expect(await givingYearsDrift(service.db, institutionId)).toEqual([]);
  // The operator's rebuild makes the same rows the writes kept.
  await service.db.query(sql.unsafe`SELECT giving_months_rebuild(${institutionId})`);
  expect(
    await service.db.any(sql.type(monthRow)`
      SELECT level, unit_id, month::text, total::text, gift_count FROM giving_months
      WHERE institution_id = ${institutionId} ORDER BY level, unit_id, month`),
  ).toEqual(recomputed);
  expect(await service.db.any(firstMonths)).toEqual(
    firsts.map(({ level, unit_id, month }) => ({ level, unit_id, month })),
  );
  expect(await givingYearsDrift(service.db, institutionId)).toEqual([]);
}, 120_000);

test('the years built again for a new fiscal year start while gifts, refunds and voids race it: every year row is its months’ sum under the start month recorded, and retention answers the same before and after', async () => {
  const tenant = await service.createTenant();
  const as = <T = { id: number }>(method: string, path: string, body?: unknown) =>
    service.call<T>(method, `/api/v1${path}`, {
      key: tenant.key,
      body,
      headers: body === undefined ? {} : { 'Idempotency-Key': randomUUID() },
    });
  const donors: number[] = [];
  for (let n = 0; n < 6; n++) {
    const created = await as('POST', '/donors', {
      role: 'Individual',
      first_name: 'Year',
      last_name: `Racer ${n}`,
      email: `year.racer.${n}.${randomUUID()}@example.org`,
    });
    expect(created.status).toBe(201);
    donors.push(created.body.id);
  }
  const gifts: number[] = [];
  for (let n = 0; n < 24; n++) {
    const created = await as('POST', '/gifts', {
      donor_id: donors[n % donors.length],
      amount: 10 + n,
      subject: 'Year race',
      gift_date: `202${5 + (n % 2)}-${String(1 + (n % 12)).padStart(2, '0')}-10`,
    });
    expect(created.status).toBe(201);
    gifts.push(created.body.id);
  }
  const retention = async () => {
    const answer = await as<Record<string, unknown>>('GET', '/reports/retention?fiscal_year=2026');
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const changed = await as('PATCH', '/institution', { fiscal_year_start_month: 7 });
  expect(changed.status).toBe(200);
  // The months answer until the years are built again.
  const before = await retention();
  const writes: Promise<unknown>[] = [rebuildStaleGivingYears(service.db)];
  for (let n = 0; n < 24; n++) {
    writes.push(
      n % 3 === 0
        ? as('POST', `/gifts/${gifts[n]}/void`, { reason: 'Racing' })
        : as('POST', '/gifts', {
            donor_id: donors[n % donors.length],
            amount: 5,
            subject: 'Year race',
            gift_date: `2025-${String(1 + (n % 12)).padStart(2, '0')}-20`,
          }),
    );
    if (n === 12) writes.push(rebuildStaleGivingYears(service.db));
  }
  await Promise.all(writes);
  expect(
    await service.db.oneFirst(sql.unsafe`
      SELECT giving_years_start_month FROM institutions WHERE id = ${tenant.institutionId}`),
  ).toBe(7);
  expect(await givingYearsDrift(service.db, tenant.institutionId)).toEqual([]);
  // Read from the years now, the same answer as the months give.
  const after = await retention();
  await service.db.query(sql.unsafe`
    UPDATE institutions SET giving_years_start_month = 1 WHERE id = ${tenant.institutionId}`);
  expect(after).toEqual(await retention());
  expect(before).not.toEqual(after);
}, 120_000);

test('retention read while donors give for the first time is one moment of the data: every unit that arrived is new, none recaptured', async () => {
  const donors: number[] = [];
  for (let n = 0; n < 24; n++) {
    const created = await call('POST', '/donors', {
      role: 'Individual',
      first_name: 'First',
      last_name: `Gift ${n}`,
    });
    expect(created.status).toBe(201);
    donors.push(created.body.id);
  }
  // Retention reads `new` and the year's figures in two statements: read apart, a gift committed
  // between them would count as arrived and not new, so recaptured.
  let writing = true;
  const writes = Promise.all(
    donors.map((donor) =>
      call('POST', '/gifts', {
        donor_id: donor,
        amount: 25,
        subject: 'First gift',
        gift_date: '2031-03-01',
      }),
    ),
  ).finally(() => {
    writing = false;
  });
  const answers: { new: number; recaptured: number; retained: number }[] = [];
  const read = () =>
    service.call<{ new: number; recaptured: number; retained: number }>(
      'GET',
      '/api/v1/reports/retention?fiscal_year=2031',
    );
  const reader = async () => {
    while (writing) {
      const answer = await read();
      expect(answer.status).toBe(200);
      answers.push(answer.body);
    }
  };
  const [created] = await Promise.all([writes, reader(), reader()]);
  for (const gift of created) expect(gift.status).toBe(201);
  expect(answers.length).toBeGreaterThan(0);
  expect(answers.filter((answer) => answer.recaptured !== 0 || answer.retained !== 0)).toEqual([]);
  const last = await read();
  expect(last.body).toMatchObject({ new: donors.length, recaptured: 0, retained: 0 });
}, 120_000);
