/** Fills the demo institution through the API itself, as a client would. */
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createInstitution, insertApiKey } from '../../common/institutions.js';
import { seedInstitution } from '../../common/seed/seedInstitution.js';
import { firstNames, lastNames } from '../../common/seed/vocabulary.js';
import {
  currentStatuses,
  daysAgo,
  donors,
  funds,
  INSTITUTION,
  scholarships,
  SEEDED,
  slug,
  staff,
  STUDENTS,
  type Body,
} from './data.js';
import { DemoError } from './errors.js';
import { recordFundraisingStories } from './fundraising.js';
import { recordMoneyStories } from './money.js';
import { recordPeopleStories } from './people.js';

type Created = Body & { id: number };

const retryable = new Set([429, 503, 504]);
const MAX_ATTEMPTS = 20;

export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /**
   * As a client should: a 429 waits its Retry-After and a 503 or 504 a moment, then the same
   * request goes again under the same Idempotency-Key, which makes the retry safe.
   */
  async send(method: string, path: string, body: Body, idempotencyKey: string): Promise<Created> {
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers: {
          'X-Service-API-Key': this.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotencyKey,
        },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as Created;
      if (!retryable.has(response.status) || attempt === MAX_ATTEMPTS) {
        throw new DemoError(`${method} ${path} answered ${response.status}: ${text}`);
      }
      const waitSeconds = Number(response.headers.get('Retry-After') ?? 1) || 1;
      await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000));
    }
  }

  create(path: string, body: Body, key: string): Promise<Created> {
    return this.send('POST', path, body, `demo-${key}`);
  }

  update(path: string, body: Body, key: string): Promise<Created> {
    return this.send('PATCH', path, body, `demo-${key}`);
  }
}

/** Runs the tasks a few at a time (the worker commits them in parallel), keeping their order. */
async function inBatches<T, R>(items: readonly T[], run: (item: T, index: number) => Promise<R>) {
  const results: R[] = [];
  const size = 8;
  for (let from = 0; from < items.length; from += size) {
    const batch = items.slice(from, from + size);
    results.push(...(await Promise.all(batch.map((item, i) => run(item, from + i)))));
  }
  return results;
}

export async function fillInstitution(
  client: ApiClient,
): Promise<{ donorId: number; fundId: number }> {
  const users = await inBatches(staff, (user, i) =>
    client.create(
      '/users',
      {
        ...user,
        email: `${slug(user.first_name)}.${slug(user.last_name)}@northbridge.example.edu`,
      },
      `user-${i}`,
    ),
  );
  const fundRows = await inBatches(funds, (fund, i) => client.create('/funds', fund, `fund-${i}`));
  const fundId = new Map(fundRows.map((fund) => [String(fund.code), fund.id]));

  const donorRows = await inBatches(donors, (donor, i) =>
    client.create(
      '/donors',
      { ...donor.body, assigned_user_id: users[donor.officer]!.id },
      `donor-${i}`,
    ),
  );
  // Relationship 1, which the document's update example changes: a trustee of a foundation.
  await client.create(
    '/relationships',
    {
      donor_id: donorRows[0]!.id,
      related_donor_id: donorRows[5]!.id,
      type: 'board_member_of',
      starts_on: daysAgo(900),
    },
    'relationship-0',
  );
  await recordPeopleStories(
    client,
    donorRows.map((row) => row.id),
  );
  // Campaign 1 and appeal 1, which the document's examples name: the annual fund, one phase of
  // it under it, and an appeal for each of the two.
  const annual = await client.create(
    '/campaigns',
    { name: 'Annual Fund', code: 'ANNUAL', goal: 500000, starts_on: daysAgo(200) },
    'campaign-0',
  );
  const yearEnd = await client.create(
    '/campaigns',
    { name: 'Annual Fund: Year-End', code: 'ANNUAL-YE', parent_id: annual.id, goal: 150000 },
    'campaign-1',
  );
  const springLetter = await client.create(
    '/appeals',
    {
      name: 'Spring letter',
      code: 'ANNUAL-MAIL',
      campaign_id: annual.id,
      channel: 'mail',
      cost: 2400,
    },
    'appeal-0',
  );
  const givingTuesday = await client.create(
    '/appeals',
    {
      name: 'Giving Tuesday email',
      code: 'ANNUAL-GT',
      campaign_id: yearEnd.id,
      channel: 'email',
      cost: 0,
    },
    'appeal-1',
  );
  const gifts = donors.flatMap((donor, d) =>
    donor.gifts.map(([amount, ago, fund, type], g) => ({
      key: `gift-${d}-${g}`,
      body: {
        donor_id: donorRows[d]!.id,
        amount,
        subject: `${funds.find((f) => f.code === fund)!.name} gift`,
        gift_date: daysAgo(ago),
        type,
        fund_id: fundId.get(fund),
        ...(type === 'check' ? { check_number: String(1040 + d * 10 + g) } : {}),
      },
    })),
  );
  await inBatches(gifts, (gift) => client.create('/gifts', gift.body, gift.key));
  const donorIds = donorRows.map((row) => row.id);
  await recordMoneyStories(client, donorIds, fundId);
  await recordFundraisingStories(client, donorIds, fundId, {
    annual: annual.id,
    yearEnd: yearEnd.id,
    springLetter: springLetter.id,
    givingTuesday: givingTuesday.id,
  });

  // Award cycles are academic years, August to May: last year's and this year's.
  const now = new Date();
  const thisYear = now.getUTCMonth() >= 7 ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  const cycles = await inBatches([thisYear - 1, thisYear], (year, i) =>
    client.create(
      '/award-cycles',
      {
        name: `${year}–${String(year + 1).slice(2)} Academic Year`,
        starts_on: `${year}-08-01`,
        ends_on: `${year + 1}-05-31`,
        status: 'open',
      },
      `cycle-${i}`,
    ),
  );
  const scholarshipRows = await inBatches(scholarships, (scholarship, i) =>
    client.create(
      '/scholarships',
      {
        name: scholarship.name,
        fund_id: fundId.get(scholarship.fund),
        description: `Awarded each academic year from the ${funds.find((f) => f.code === scholarship.fund)!.name}.`,
      },
      `scholarship-${i}`,
    ),
  );
  const students = await inBatches(
    Array.from({ length: STUDENTS }, (_, i) => i),
    (i) => {
      const first = firstNames[(i * 7) % firstNames.length]!;
      const last = lastNames[(i * 11 + 3) % lastNames.length]!;
      return client.create(
        '/students',
        {
          student_number: `S-${24101 + i}`,
          first_name: first,
          last_name: last,
          email: i % 5 === 4 ? null : `${slug(first)}.${slug(last)}${i}@students.northbridge.edu`,
        },
        `student-${i}`,
      );
    },
  );

  // Last year: 12 awards, all paid out; then that cycle closes. This year: 30 awards in every status.
  const awards = [
    ...Array.from({ length: 12 }, (_, i) => ({
      cycle: 0,
      student: i,
      statuses: ['accepted', 'disbursed'],
    })),
    ...Array.from({ length: 30 }, (_, i) => {
      const end = currentStatuses[i % currentStatuses.length]!;
      const statuses =
        end === 'offered' ? [] : end === 'disbursed' ? ['accepted', 'disbursed'] : [end];
      return { cycle: 1, student: 10 + i, statuses };
    }),
  ];
  await inBatches(awards, async (award, i) => {
    const scholarship = scholarships[i % scholarships.length]!;
    const created = await client.create(
      '/awards',
      {
        award_cycle_id: cycles[award.cycle]!.id,
        scholarship_id: scholarshipRows[i % scholarships.length]!.id,
        student_id: students[award.student % STUDENTS]!.id,
        amount: scholarship.amount,
      },
      `award-${i}`,
    );
    for (const status of award.statuses) {
      await client.update(`/awards/${created.id}`, { status }, `award-${i}-${status}`);
    }
  });
  await client.update(`/award-cycles/${cycles[0]!.id}`, { status: 'closed' }, 'cycle-0-closed');

  return { donorId: donorRows[0]!.id, fundId: fundId.get('ANNUAL')! };
}

/**
 * The demo institution, its API key, the donor and fund the printed gift command uses, and a
 * statement of last year's the printed PDF command fetches (null when a kept database has none).
 */
export interface DemoInstitution {
  institutionId: number;
  key: string;
  donorId: number;
  fundId: number;
  statementId: number | null;
}

const idRow = z.object({ id: z.number() });

/** How long the demo waits for last year's statement run before it prints without one. */
const STATEMENT_RUN_WAIT_MS = 20_000;

/**
 * Last year's giving statements, as a development office issues them in January: one run over
 * every donor whose giving counted (docs/giving-statements.md), waited for so that the printed
 * PDF command works at once.
 */
async function issueLastYearsStatements(
  pool: DatabasePool,
  client: ApiClient,
  institutionId: number,
): Promise<number | null> {
  const year = new Date().getUTCFullYear() - 1;
  const run = await client.create(
    '/giving-statement-runs',
    { year, period: 'calendar' },
    `statements-${year}`,
  );
  const deadline = Date.now() + STATEMENT_RUN_WAIT_MS;
  while (Date.now() < deadline) {
    const status = await pool.oneFirst(sql.type(z.object({ status: z.string() }))`
      SELECT status FROM giving_statement_runs
      WHERE institution_id = ${institutionId} AND id = ${run.id}`);
    if (status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return firstStatement(pool, institutionId);
}

/** The institution's first statement still in force, if any. */
const firstStatement = (pool: DatabasePool, institutionId: number) =>
  pool.maybeOneFirst(sql.type(idRow)`
    SELECT id FROM giving_statements
    WHERE institution_id = ${institutionId} AND status = 'issued' ORDER BY id LIMIT 1`);

/**
 * Creates the institution and fills it through the API at `apiUrl`, so every record passed the
 * same validation a client's would; then the volume seeder adds a few hundred donors and gifts.
 */
export async function createDemoInstitution(
  pool: DatabasePool,
  apiUrl: string,
): Promise<DemoInstitution> {
  const created = await createInstitution(pool, INSTITUTION, 'USD');
  const client = new ApiClient(apiUrl, created.apiKey.key);
  const ids = await fillInstitution(client);
  await seedInstitution(pool, { institutionId: created.institution.id, ...SEEDED });
  const statementId = await issueLastYearsStatements(pool, client, created.institution.id);
  // The user gets a key of its own: the filling key may have spent this second's rate budget
  // (RATE_LIMIT_PER_SECOND), and the printed curls must work at once.
  const apiKey = await pool.transaction((db) => insertApiKey(db, created.institution.id));
  return { institutionId: created.institution.id, key: apiKey.key, ...ids, statementId };
}

/**
 * The institution of a demo database kept from an earlier run, with a new API key (keys are
 * stored only as digests, so the earlier one cannot be printed again; it stays valid).
 */
export async function reopenDemoInstitution(pool: DatabasePool): Promise<DemoInstitution> {
  const startOver = 'start over with `npm run demo -- --fresh`';
  const institutionId = await pool.maybeOneFirst(sql.type(idRow)`
    SELECT id FROM institutions WHERE name = ${INSTITUTION} ORDER BY id LIMIT 1`);
  if (institutionId === null) {
    throw new DemoError(
      `The kept demo database has no institution "${INSTITUTION}": ${startOver}.`,
    );
  }
  // The named donor and fund of the printed gift command, or any when the user removed them.
  const donorId = await pool.maybeOneFirst(sql.type(idRow)`
    SELECT id FROM donors WHERE institution_id = ${institutionId}
    ORDER BY (email = 'margaret.chen@example.org') IS TRUE DESC, id LIMIT 1`);
  const fundId = await pool.maybeOneFirst(sql.type(idRow)`
    SELECT id FROM funds WHERE institution_id = ${institutionId} AND status = 'active'
    ORDER BY (code = 'ANNUAL') DESC, id LIMIT 1`);
  if (donorId === null || fundId === null) {
    throw new DemoError(`The kept demo institution has no donor or no open fund: ${startOver}.`);
  }
  const apiKey = await pool.transaction((db) => insertApiKey(db, institutionId));
  const statementId = await firstStatement(pool, institutionId);
  return { institutionId, key: apiKey.key, donorId, fundId, statementId };
}
