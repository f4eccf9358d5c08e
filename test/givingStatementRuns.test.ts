// Giving statement runs (fundraising.md §6): a run issues a statement to every donor over
// min_total in the background, with live progress, events per statement and one at completion.
import { unzipSync } from 'fflate';
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';
import { waitFor } from './helpers/wait.js';

type Json = Record<string, unknown>;

interface Run {
  id: number;
  object: 'giving_statement_run';
  status: 'queued' | 'running' | 'completed' | 'failed';
  donors_total: number;
  donors_done: number;
  min_total: number;
  completed_at: string | null;
}

let service: TestService;
let tenant: Tenant;

const call = <T = Json>(method: string, path: string, body?: Json, headers = {}) =>
  service.call<T>(method, `/api/v1${path}`, { key: tenant.key, body, headers });

const statements = () =>
  service.db.any(sql.type(
    z.object({
      donor_id: z.number(),
      seq: z.number(),
      status: z.string(),
      run_id: z.number().nullable(),
    }),
  )`
    SELECT donor_id, seq, status, run_id FROM giving_statements
    WHERE institution_id = ${tenant.institutionId} ORDER BY seq`);

beforeAll(async () => {
  service = await startTestService();
  tenant = await service.createTenant('Run College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

test('a run issues one statement to each donor over min_total, numbered on, with its progress and events', async () => {
  // 30 donors over 50 (two steps of a run), 3 at 50 or under, and one with a statement already.
  const amounts = [...Array.from({ length: 30 }, (_, index) => 60 + index), 50, 10, 5];
  const donors: { id: number; amount: number }[] = [];
  for (const [index, amount] of amounts.entries()) {
    const donor = await created<{ id: number }>(
      call('POST', '/donors', {
        role: 'Individual',
        first_name: 'Run',
        last_name: `Donor ${index}`,
        email: `run${index}@example.org`,
      }),
    );
    await created(
      call('POST', '/gifts', {
        donor_id: donor.id,
        amount,
        subject: 'Fund',
        gift_date: '2025-06-01',
      }),
    );
    donors.push({ id: donor.id, amount });
  }
  const earlier = await created<{ id: number; number: string }>(
    call('POST', '/giving-statements', { donor_id: donors[0]!.id, year: 2025 }),
  );
  expect(earlier.number).toBe('2025-1');

  const dry = await call<Run>('POST', '/giving-statement-runs?dry_run=true', {
    year: 2025,
    min_total: 50,
  });
  expect(dry.status).toBe(202);
  expect(dry.body).toMatchObject({ id: 0, status: 'queued', donors_total: 30, donors_done: 0 });
  expect(await service.count('giving_statement_runs', tenant.institutionId)).toBe(0);

  const accepted = await call<Run>(
    'POST',
    '/giving-statement-runs',
    { year: 2025, period: 'calendar', min_total: 50 },
    { 'Idempotency-Key': 'run-2025' },
  );
  expect(accepted.status).toBe(202);
  expect(accepted.headers.get('Location')).toBe(
    `/api/v1/giving-statement-runs/${accepted.body.id}`,
  );
  expect(accepted.body).toMatchObject({ status: 'queued', donors_total: 30, min_total: 50 });

  let done: Run | null = null;
  await waitFor(async () => {
    done = (await call<Run>('GET', `/giving-statement-runs/${accepted.body.id}`)).body;
    return done.status === 'completed';
  });
  expect(done).toMatchObject({
    donors_total: 30,
    donors_done: 30,
    completed_at: expect.any(String),
  });

  const rows = await statements();
  const over = donors.filter(({ amount }) => amount > 50).map(({ id }) => id);
  const ofRun = rows.filter((row) => row.run_id === accepted.body.id);
  expect(ofRun.map((row) => row.donor_id).sort((a, b) => a - b)).toEqual(over);
  // Numbered on from the statement issued before, with no gap.
  expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: 31 }, (_, index) => index + 1));
  expect(rows.find((row) => row.seq === 1)).toMatchObject({ status: 'superseded' });

  const events = async (type: string) =>
    (
      await call<{ data: { type: string; request_id: string | null } }[]>(
        'GET',
        `/events?type=${type}&limit=100`,
      )
    ).body as unknown as { data: { data: { object: Json } }[] };
  expect((await events('giving_statement.issued')).data).toHaveLength(31);
  const completed = (await events('giving_statement_run.completed')).data;
  expect(completed).toHaveLength(1);
  expect(completed[0]!.data.object).toEqual(
    (await call('GET', `/giving-statement-runs/${accepted.body.id}`)).body,
  );
  expect((await events('giving_statement_run.created')).data).toHaveLength(1);

  // Every statement of the run as a PDF, in one zip for the mailing house.
  const zip = await fetch(
    `${service.url}/api/v1/giving-statement-runs/${accepted.body.id}/documents.zip`,
    { headers: { 'X-Service-API-Key': tenant.key } },
  );
  expect(zip.status).toBe(200);
  expect(zip.headers.get('Content-Type')).toBe('application/zip');
  expect(zip.headers.get('Content-Disposition')).toBe(
    `attachment; filename="giving-statement-run-${accepted.body.id}.zip"`,
  );
  const files = unzipSync(new Uint8Array(await zip.arrayBuffer()));
  expect(Object.keys(files).sort()).toEqual(
    ofRun.map((row) => `giving-statement-2025-${row.seq}.pdf`).sort(),
  );
  for (const pdf of Object.values(files))
    expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-');
  const stranger = await service.createTenant('Zip Stranger College', 'USD');
  const theirs = await service.call(
    'GET',
    `/api/v1/giving-statement-runs/${accepted.body.id}/documents.zip`,
    { key: stranger.key },
  );
  expect(theirs.status).toBe(404);
});

test('bad input is refused three ways alike, and no run is made', async () => {
  const snapshot = () => service.count('giving_statement_runs', tenant.institutionId);
  const refuse = (body: Json, errors: { param: string; code: string }[]) =>
    expectSameFailureThreeWays(
      service,
      '/api/v1/giving-statement-runs',
      'POST',
      body,
      errors,
      snapshot,
      {
        key: tenant.key,
      },
    );
  await refuse({ year: 9998 }, [{ param: 'year', code: 'out_of_range' }]);
  await refuse({ year: 2025, period: 'monthly' }, [{ param: 'period', code: 'invalid_value' }]);
  await refuse({ year: 2025, min_total: -1 }, [{ param: 'min_total', code: 'out_of_range' }]);
  await refuse({}, [{ param: 'year', code: 'required' }]);
  const other = await service.createTenant('Other Run College', 'USD');
  const theirs = await service.call('GET', '/api/v1/giving-statement-runs/1', { key: other.key });
  expect(theirs.status).toBe(404);
});

test('a run whose steps keep failing is given up (failed), keeps nothing half done, and the runs after it go on', async () => {
  const withGiver = async (name: string) => {
    const college = await service.createTenant(name, 'USD');
    const post = <T>(path: string, body: Json) =>
      service.call<T & { id: number }>('POST', `/api/v1${path}`, { key: college.key, body });
    const donor = await created(
      post('/donors', {
        role: 'Individual',
        first_name: 'Ada',
        last_name: name,
        email: `ada@${name.split(' ')[0]!.toLowerCase()}.example.org`,
      }),
    );
    await created(
      post('/gifts', { donor_id: donor.id, amount: 100, subject: 'Fund', gift_date: '2025-03-01' }),
    );
    const startRun = async () => {
      const accepted = await post<Run>('/giving-statement-runs', { year: 2025 });
      expect(accepted.status).toBe(202);
      return accepted.body;
    };
    return { college, startRun };
  };
  const broken = await withGiver('Broken College');
  const healthy = await withGiver('Healthy College');
  // A fault in the database itself: no statement of the broken college can be written.
  await service.db.query(sql.unsafe`
    CREATE FUNCTION refuse_statement() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'statements of this institution are refused'; END $$`);
  await service.db.query(sql.unsafe`
    CREATE TRIGGER refuse_statement BEFORE INSERT ON giving_statements FOR EACH ROW
    WHEN (NEW.institution_id = ${sql.literalValue(String(broken.college.institutionId))})
    EXECUTE FUNCTION refuse_statement()`);
  try {
    // The broken run is first in line; the healthy one waits behind it until it is given up.
    const stuck = await broken.startRun();
    const next = await healthy.startRun();
    const runOf = async (college: Tenant, id: number) =>
      (
        await service.call<Run>('GET', `/api/v1/giving-statement-runs/${id}`, {
          key: college.key,
        })
      ).body;
    await waitFor(
      async () => (await runOf(healthy.college, next.id)).status === 'completed',
      15_000,
      'the run after the broken one',
    );
    expect(await runOf(broken.college, stuck.id)).toMatchObject({
      status: 'failed',
      donors_done: 0,
      completed_at: null,
    });
    expect(await service.count('giving_statements', broken.college.institutionId)).toBe(0);
    expect(await service.count('giving_statements', healthy.college.institutionId)).toBe(1);
  } finally {
    await service.db.query(sql.unsafe`DROP TRIGGER refuse_statement ON giving_statements`);
    await service.db.query(sql.unsafe`DROP FUNCTION refuse_statement()`);
  }
});
