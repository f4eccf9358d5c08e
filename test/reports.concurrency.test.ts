// The reports' month rows under writes that race (fundraising.md §5): gifts, refunds and voids of
// donors who join, leave and change households at the same moment, on two workers. However they
// interleave, the rows, and each unit's first month, equal a recomputation from the gifts and the
// donors as they end.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
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
}, 120_000);
