import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';

/**
 * `admin seed`: volume data for an existing institution, made by bulk inserts. Driven through the
 * built CLI, as an operator runs it; the result is checked in the database and through the API.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
interface Summary {
  seeded: { donors: number; gifts: number; funds: number };
  seconds: number;
}
interface Page {
  has_more: boolean;
  next_cursor: string | null;
  data: Array<{ id: number }>;
}

const adminJs = path.resolve(process.cwd(), 'dist/cli/admin.js');

let service: TestService;
let bystander: Tenant;
let first: Run;

function admin(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [adminJs, ...args], {
      env: { ...process.env, DATABASE_URL: service.config.DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const seed = (institutionId: number, donors: number, gifts: number, funds: number) =>
  admin(
    'seed',
    '--institution',
    String(institutionId),
    '--donors',
    String(donors),
    '--gifts',
    String(gifts),
    '--funds',
    String(funds),
  );

async function counts(institutionId: number) {
  return {
    donors: await service.count('donors', institutionId),
    gifts: await service.count('gifts', institutionId),
    funds: await service.count('funds', institutionId),
  };
}

async function rows<T>(query: ReturnType<typeof sql.unsafe>): Promise<T[]> {
  return (await service.db.any(query)) as unknown as T[];
}

beforeAll(async () => {
  service = await startTestService();
  bystander = await service.createTenant('Bystander College', 'EUR');
  first = await seed(service.tenant.institutionId, 200, 1000, 5);
});
afterAll(async () => {
  await service?.close();
});

describe('a seed run', () => {
  test('prints one JSON summary on stdout and, without a terminal, nothing on stderr', () => {
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout.endsWith('\n')).toBe(true);
    expect(first.stdout.trimEnd().split('\n')).toHaveLength(1);
    const summary = JSON.parse(first.stdout) as Summary;
    expect(summary).toEqual({
      seeded: { donors: 200, gifts: 1000, funds: 5 },
      seconds: expect.any(Number),
    });
    expect(summary.seconds).toBeGreaterThanOrEqual(0);
    expect(summary.seconds).toBeLessThan(60);
  });

  test('creates exactly the rows asked for, in that institution only', async () => {
    expect(await counts(service.tenant.institutionId)).toEqual({
      donors: 200,
      gifts: 1000,
      funds: 5,
    });
    expect(await counts(bystander.institutionId)).toEqual({ donors: 0, gifts: 0, funds: 0 });
  });

  test('donors: every role, with the names each role needs, and unique emails', async () => {
    const [stats] = await rows<Record<string, number>>(sql.unsafe`
      SELECT count(DISTINCT role)::int AS roles,
             count(email)::int AS emails,
             count(DISTINCT lower(email))::int AS distinct_emails,
             count(*) FILTER (WHERE role = 'Individual'
               AND (first_name IS NULL OR last_name IS NULL OR organization_name IS NOT NULL))::int
               AS bad_individuals,
             count(*) FILTER (WHERE role = 'Household' AND last_name IS NULL)::int AS bad_households,
             count(*) FILTER (WHERE role IN ('Organization', 'Foundation', 'Corporation')
               AND organization_name IS NULL)::int AS bad_organizations,
             count(*) FILTER (WHERE status = 'deceased' AND role <> 'Individual')::int
               AS bad_deceased,
             count(DISTINCT status)::int AS statuses
      FROM donors WHERE institution_id = ${service.tenant.institutionId}`);
    expect(stats).toEqual({
      roles: 5,
      emails: expect.any(Number),
      distinct_emails: stats!.emails,
      bad_individuals: 0,
      bad_households: 0,
      bad_organizations: 0,
      bad_deceased: 0,
      statuses: expect.any(Number),
    });
    expect(stats!.emails).toBeGreaterThan(150);
    expect(stats!.statuses).toBeGreaterThanOrEqual(2);
  });

  test('gifts: spread over donors and funds (some without), every type, years of dates, cents', async () => {
    const [stats] = await rows<Record<string, number | string>>(sql.unsafe`
      SELECT count(DISTINCT donor_id)::int AS donors,
             (SELECT count(DISTINCT fund)::int FROM gifts g, unnest(g.fund_ids) AS fund
              WHERE g.institution_id = ${service.tenant.institutionId}) AS funds,
             count(*) FILTER (WHERE fund_ids = '{}')::int AS without_fund,
             count(*) FILTER (WHERE cardinality(fund_ids) > 1
                              OR (cardinality(fund_ids) = 1
                                  AND (designations -> 0 ->> 'amount')::numeric <> amount))::int
               AS bad_designations,
             count(DISTINCT type)::int AS types,
             (max(gift_date) - min(gift_date))::int AS days,
             count(*) FILTER (WHERE amount <> trunc(amount))::int AS with_cents,
             count(*) FILTER (WHERE amount <= 0)::int AS not_positive,
             count(*) FILTER (WHERE currency <> 'USD')::int AS other_currency,
             count(*) FILTER (WHERE type = 'check' AND check_number IS NULL)::int
               AS checks_without_number,
             count(*) FILTER (WHERE gift_date > current_date)::int AS future
      FROM gifts WHERE institution_id = ${service.tenant.institutionId}`);
    expect(stats).toMatchObject({
      types: 8,
      not_positive: 0,
      other_currency: 0,
      checks_without_number: 0,
      future: 0,
      bad_designations: 0,
    });
    expect(stats!.donors).toBeGreaterThan(50);
    expect(stats!.funds).toBeGreaterThanOrEqual(1);
    expect(stats!.funds).toBeLessThanOrEqual(5);
    expect(stats!.without_fund).toBeGreaterThan(0);
    expect(stats!.without_fund).toBeLessThan(1000);
    expect(stats!.days).toBeGreaterThan(3 * 365);
    expect(stats!.with_cents).toBeGreaterThan(0);
  });

  test('GET /gifts pages through all 1000 gifts exactly once, newest first', async () => {
    const seen: number[] = [];
    let response = await service.call<Page>('GET', '/api/v1/gifts?limit=100');
    for (;;) {
      expect(response.status).toBe(200);
      seen.push(...response.body.data.map((row) => row.id));
      if (!response.body.has_more) break;
      response = await service.call<Page>(
        'GET',
        `/api/v1/gifts?limit=100&starting_after=${encodeURIComponent(response.body.next_cursor!)}`,
      );
    }
    const expected = (
      await service.db.anyFirst(sql.unsafe`
        SELECT id FROM gifts WHERE institution_id = ${service.tenant.institutionId}
        ORDER BY id DESC`)
    ).map(Number);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen).size).toBe(1000);
    expect(seen).toEqual(expected);
  });

  test('seeded records pass the rules the API enforces (an update re-validates the whole record)', async () => {
    const institutionId = service.tenant.institutionId;
    const donorSample = await rows<{ id: number; gives_anonymously: boolean }>(sql.unsafe`
      SELECT DISTINCT ON (role, status) id::int, gives_anonymously FROM donors
      WHERE institution_id = ${institutionId} ORDER BY role, status, id`);
    const giftSample = await rows<{ id: number; subject: string }>(sql.unsafe`
      SELECT DISTINCT ON (type, fund_ids = '{}') id::int, subject FROM gifts
      WHERE institution_id = ${institutionId} ORDER BY type, fund_ids = '{}', id`);
    const fundSample = await rows<{ id: number; endowed: boolean }>(sql.unsafe`
      SELECT id::int, endowed FROM funds WHERE institution_id = ${institutionId}`);
    const updates: Array<[string, unknown]> = [
      ...donorSample.map((row): [string, unknown] => [
        `/api/v1/donors/${row.id}`,
        { gives_anonymously: row.gives_anonymously },
      ]),
      ...giftSample.map((row): [string, unknown] => [
        `/api/v1/gifts/${row.id}`,
        { subject: row.subject },
      ]),
      ...fundSample.map((row): [string, unknown] => [
        `/api/v1/funds/${row.id}`,
        { endowed: row.endowed },
      ]),
    ];
    expect(donorSample.length).toBeGreaterThanOrEqual(5);
    expect(giftSample.length).toBeGreaterThanOrEqual(8);
    for (const [url, body] of updates) {
      const response = await service.call('PATCH', url, { body });
      expect({ url, status: response.status, body: response.body }).toMatchObject({
        url,
        status: 200,
      });
    }
  });

  test('a second run adds to the institution, and emails stay unique', async () => {
    const run = await seed(service.tenant.institutionId, 50, 10, 1);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ seeded: { donors: 50, gifts: 10, funds: 1 } });
    expect(await counts(service.tenant.institutionId)).toEqual({
      donors: 250,
      gifts: 1010,
      funds: 6,
    });
    const [emails] = await rows<{ total: number; distinct_emails: number }>(sql.unsafe`
      SELECT count(email)::int AS total, count(DISTINCT lower(email))::int AS distinct_emails
      FROM donors WHERE institution_id = ${service.tenant.institutionId}`);
    expect(emails!.distinct_emails).toBe(emails!.total);
  });

  test('gifts take the currency of their institution', async () => {
    const run = await seed(bystander.institutionId, 3, 20, 1);
    expect(run.code).toBe(0);
    const currencies = await service.db.anyFirst(sql.unsafe`
      SELECT DISTINCT currency FROM gifts WHERE institution_id = ${bystander.institutionId}`);
    expect(currencies).toEqual(['EUR']);
  });
});

describe('invalid arguments', () => {
  /** Stands for the test institution's id. */
  const TENANT = '<tenant>';
  test.each<[string, string[], RegExp]>([
    [
      'an institution that does not exist',
      ['--institution', '999999', '--donors', '1', '--gifts', '1'],
      /no institution with id 999999/i,
    ],
    ['--donors 0', ['--institution', TENANT, '--donors', '0', '--gifts', '1'], /--donors/],
    ['--gifts abc', ['--institution', TENANT, '--donors', '1', '--gifts', 'abc'], /--gifts/],
    ['--gifts 1.5', ['--institution', TENANT, '--donors', '1', '--gifts', '1.5'], /--gifts/],
    [
      '--funds -1',
      ['--institution', TENANT, '--donors', '1', '--gifts', '1', '--funds', '-1'],
      /--funds/,
    ],
    ['--institution x', ['--institution', 'x', '--donors', '1', '--gifts', '1'], /--institution/],
    ['no --gifts', ['--institution', TENANT, '--donors', '1'], /--gifts/],
  ])(
    '%s: one line on stderr, nothing on stdout, non-zero exit, nothing seeded',
    async (_label, args, mentions) => {
      const before = await counts(service.tenant.institutionId);
      const run = await admin(
        'seed',
        ...args.map((arg) => (arg === TENANT ? String(service.tenant.institutionId) : arg)),
      );
      expect(run.code).not.toBe(0);
      expect(run.code).not.toBeNull();
      expect(run.stdout).toBe('');
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(run.stderr).toMatch(mentions);
      expect(await counts(service.tenant.institutionId)).toEqual(before);
    },
  );
});
