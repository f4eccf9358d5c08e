// Relationships (constituents.md §2): one row per relationship, read from both sides, the type
// table's roles, the duplicate and one-current-spouse rules (under concurrency too), and their
// going with either donor.
import { sql } from 'slonik';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';

interface Relationship {
  id: number;
  object: string;
  donor_id: number;
  related_donor_id: number;
  type: string;
  starts_on: string | null;
  ends_on: string | null;
  is_current: boolean;
  note: string | null;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  object: string;
  url: string;
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

interface Event {
  type: string;
  request_id: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

/** The service's day, pinned: what is current is judged against it. */
const TODAY = '2026-06-15';
const YESTERDAY = '2026-06-14';

let service: TestService;
let other: Tenant;
let donorCounter = 0;

type Role = 'Individual' | 'Household' | 'Organization' | 'Foundation' | 'Corporation';

async function donor(role: Role = 'Individual', key?: string): Promise<number> {
  const n = ++donorCounter;
  const names =
    role === 'Individual'
      ? { first_name: 'Pat', last_name: `Person ${n}` }
      : role === 'Household'
        ? { last_name: `Household ${n}` }
        : { organization_name: `${role} ${n}` };
  const body = { role, ...names, email: `donor${n}@example.org` };
  return (await created<{ id: number }>(service.call('POST', '/api/v1/donors', { key, body }))).id;
}

const relate = (body: Record<string, unknown>, key?: string) =>
  created<Relationship>(service.call('POST', '/api/v1/relationships', { key, body }));

const relationshipRows = () =>
  service.db.any(sql.unsafe`
    SELECT id, donor_id, related_donor_id, type, starts_on::text, ends_on::text, note, updated_at
    FROM relationships ORDER BY id`);

const listOf = async (donorId: number, query = '') => {
  const page = await service.call<Page<Relationship>>(
    'GET',
    `/api/v1/donors/${donorId}/relationships${query}`,
  );
  expect(page.status).toBe(200);
  return page.body;
};

const eventsOf = async (id: number) => {
  const page = await service.call<{ data: Event[] }>(
    'GET',
    `/api/v1/events?object_type=relationship&object_id=${id}`,
  );
  expect(page.status).toBe(200);
  return page.body.data;
};

/** Statements of this file's database waiting for a lock. */
const lockWaits = async () =>
  Number(
    await service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`),
  );

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

describe('POST /relationships', () => {
  test('creates a relationship: 201 with Location, GET answers the same, one event', async () => {
    const [a, b] = [await donor(), await donor()];
    const response = await service.call<Relationship>('POST', '/api/v1/relationships', {
      body: {
        donor_id: a,
        related_donor_id: b,
        type: 'parent_of',
        starts_on: '1990-04-01',
        note: '  Adoptive parent ',
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'relationship',
      donor_id: a,
      related_donor_id: b,
      type: 'parent_of',
      starts_on: '1990-04-01',
      ends_on: null,
      is_current: true,
      note: 'Adoptive parent',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const { id } = response.body;
    expect(response.headers.get('Location')).toBe(`/api/v1/relationships/${id}`);
    const read = await service.call<Relationship>('GET', `/api/v1/relationships/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['relationship.created']);
    expect(events[0]!.data.object).toEqual(response.body);
  });

  test('a dry run answers exactly what the real call then does, with id 0, and writes nothing', async () => {
    const [a, b] = [await donor(), await donor('Corporation')];
    const body = { donor_id: a, related_donor_id: b, type: 'employee_of', ends_on: YESTERDAY };
    const before = await relationshipRows();
    const dry = await service.call<Relationship>('POST', '/api/v1/relationships?dry_run=true', {
      body,
    });
    expect(dry.status).toBe(201);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await relationshipRows()).toEqual(before);
    const real = await relate(body);
    expect(dry.body).toEqual({
      ...real,
      id: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(real.is_current).toBe(false);
  });

  test('a retry with the same Idempotency-Key replays the relationship; another body is 422', async () => {
    const [a, b] = [await donor(), await donor()];
    const body = { donor_id: a, related_donor_id: b, type: 'sibling_of' };
    const headers = { 'Idempotency-Key': 'relationship-once' };
    const first = await service.call<Relationship>('POST', '/api/v1/relationships', {
      body,
      headers,
    });
    const second = await service.call<Relationship>('POST', '/api/v1/relationships', {
      body,
      headers,
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    const mismatch = await service.call('POST', '/api/v1/relationships', {
      body: { ...body, type: 'other' },
      headers,
    });
    expect(mismatch.status).toBe(422);
    expect((mismatch.body as { error: { code: string } }).error.code).toBe(
      'idempotency_key_request_mismatch',
    );
    const rows = await service.db.anyFirst(
      sql.unsafe`SELECT id FROM relationships WHERE donor_id = ${a}`,
    );
    expect(rows).toEqual([first.body.id]);
    expect(await eventsOf(first.body.id)).toHaveLength(1);
  });

  test('is_current follows the pinned day: ending today is current, ending yesterday is not', async () => {
    const [a, b, c] = [await donor(), await donor(), await donor()];
    expect(
      (await relate({ donor_id: a, related_donor_id: b, type: 'other', ends_on: TODAY }))
        .is_current,
    ).toBe(true);
    const future = await relate({
      donor_id: a,
      related_donor_id: c,
      type: 'other',
      starts_on: '2030-01-01',
    });
    expect(future.is_current).toBe(true);
    const ended = await relate({
      donor_id: b,
      related_donor_id: c,
      type: 'other',
      ends_on: YESTERDAY,
    });
    expect(ended.is_current).toBe(false);
  });

  test('the roles each type joins: organization roles, households and the any–any types', async () => {
    const person = await donor();
    for (const role of ['Organization', 'Foundation', 'Corporation'] as const) {
      const organization = await donor(role);
      await relate({ donor_id: person, related_donor_id: organization, type: 'employee_of' });
      await relate({ donor_id: person, related_donor_id: organization, type: 'board_member_of' });
    }
    const household = await donor('Household');
    const foundation = await donor('Foundation');
    await relate({ donor_id: foundation, related_donor_id: household, type: 'advisor_of' });
    await relate({ donor_id: household, related_donor_id: foundation, type: 'other' });
  });
});

describe('POST /relationships: bad input, the same from the real call and both dry runs', () => {
  let a: number;
  let b: number;
  let household: number;
  let company: number;
  let theirs: number;
  beforeAll(async () => {
    [a, b, household, company] = [
      await donor(),
      await donor(),
      await donor('Household'),
      await donor('Corporation'),
    ];
    theirs = await donor('Individual', other.key);
  });

  const cases: Array<
    [string, () => Record<string, unknown>, Array<{ param: string; code: string }>]
  > = [
    [
      'an empty body',
      () => ({}),
      [
        { param: 'donor_id', code: 'required' },
        { param: 'related_donor_id', code: 'required' },
        { param: 'type', code: 'required' },
      ],
    ],
    [
      'an unknown type',
      () => ({ donor_id: a, related_donor_id: b, type: 'cousin_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'a reciprocal as the type',
      () => ({ donor_id: a, related_donor_id: b, type: 'child_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'the same donor on both sides',
      () => ({ donor_id: a, related_donor_id: a, type: 'other' }),
      [{ param: 'related_donor_id', code: 'not_allowed' }],
    ],
    [
      'ends_on before starts_on',
      () => ({
        donor_id: a,
        related_donor_id: b,
        type: 'other',
        starts_on: '2020-05-02',
        ends_on: '2020-05-01',
      }),
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'a date that does not exist',
      () => ({ donor_id: a, related_donor_id: b, type: 'other', starts_on: '2026-02-30' }),
      [{ param: 'starts_on', code: 'invalid_format' }],
    ],
    [
      'a note of 501 characters',
      () => ({ donor_id: a, related_donor_id: b, type: 'other', note: 'n'.repeat(501) }),
      [{ param: 'note', code: 'too_long' }],
    ],
    [
      'a donor id that is not an id',
      () => ({ donor_id: 'one', related_donor_id: -4, type: 'other' }),
      [
        { param: 'donor_id', code: 'invalid_type' },
        { param: 'related_donor_id', code: 'out_of_range' },
      ],
    ],
    [
      'a donor id of the wrong type beside a missing donor',
      () => ({ donor_id: 'one', related_donor_id: 999999999, type: 'other' }),
      [
        { param: 'donor_id', code: 'invalid_type' },
        { param: 'related_donor_id', code: 'reference_not_found' },
      ],
    ],
    [
      'missing donors',
      () => ({ donor_id: 999999999, related_donor_id: 999999998, type: 'other' }),
      [
        { param: 'donor_id', code: 'reference_not_found' },
        { param: 'related_donor_id', code: 'reference_not_found' },
      ],
    ],
    [
      'another institution’s donor',
      () => ({ donor_id: a, related_donor_id: theirs, type: 'other' }),
      [{ param: 'related_donor_id', code: 'reference_not_found' }],
    ],
    [
      'spouse_of a household',
      () => ({ donor_id: a, related_donor_id: household, type: 'spouse_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'parent_of a corporation',
      () => ({ donor_id: company, related_donor_id: a, type: 'parent_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'employee_of an individual',
      () => ({ donor_id: a, related_donor_id: b, type: 'employee_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'employee_of written from the employer’s side',
      () => ({ donor_id: company, related_donor_id: a, type: 'employee_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'board_member_of a household (not an organization role)',
      () => ({ donor_id: a, related_donor_id: household, type: 'board_member_of' }),
      [{ param: 'type', code: 'invalid_value' }],
    ],
    [
      'a read-only field',
      () => ({ donor_id: a, related_donor_id: b, type: 'other', is_current: true }),
      [{ param: 'is_current', code: 'unknown_field' }],
    ],
  ];
  test.each(cases)('%s: 422, nothing written', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/relationships',
      'POST',
      body,
      expected,
      relationshipRows,
    );
  });

  test('a reciprocal type says how to write it', async () => {
    const response = await service.call<{ error: { errors: { message: string }[] } }>(
      'POST',
      '/api/v1/relationships',
      { body: { donor_id: a, related_donor_id: b, type: 'employer_of' } },
    );
    expect(response.status).toBe(422);
    expect(response.body.error.errors[0]!.message).toMatch(/employee_of.*swapped/);
  });
});

describe('the duplicate and one-current-spouse rules', () => {
  const expectTaken = (body: () => Record<string, unknown>) =>
    expectSameFailureThreeWays(
      service,
      '/api/v1/relationships',
      'POST',
      body,
      [{ param: 'type', code: 'already_in_use' }],
      relationshipRows,
    );

  test('the same pair and type, both current, is refused in either order', async () => {
    const [a, b] = [await donor(), await donor()];
    await relate({ donor_id: a, related_donor_id: b, type: 'parent_of' });
    await expectTaken(() => ({ donor_id: a, related_donor_id: b, type: 'parent_of' }));
    await expectTaken(() => ({ donor_id: b, related_donor_id: a, type: 'parent_of' }));
    // Another type between the same two, or the same type ended, is another fact.
    await relate({ donor_id: a, related_donor_id: b, type: 'other' });
    await relate({ donor_id: b, related_donor_id: a, type: 'parent_of', ends_on: YESTERDAY });
  });

  test('a pair whose relationship has ended may start a new one', async () => {
    const [person, company] = [await donor(), await donor('Organization')];
    const first = await relate({
      donor_id: person,
      related_donor_id: company,
      type: 'employee_of',
    });
    await expectTaken(() => ({ donor_id: person, related_donor_id: company, type: 'employee_of' }));
    const ended = await service.call('PATCH', `/api/v1/relationships/${first.id}`, {
      body: { ends_on: YESTERDAY },
    });
    expect(ended.status).toBe(200);
    await relate({ donor_id: person, related_donor_id: company, type: 'employee_of' });
  });

  test('an Individual has at most one current spouse or partner, on either side', async () => {
    const [a, b, c, d] = [await donor(), await donor(), await donor(), await donor()];
    const marriage = await relate({ donor_id: a, related_donor_id: b, type: 'spouse_of' });
    await expectTaken(() => ({ donor_id: a, related_donor_id: c, type: 'spouse_of' }));
    await expectTaken(() => ({ donor_id: c, related_donor_id: a, type: 'partner_of' }));
    await expectTaken(() => ({ donor_id: d, related_donor_id: b, type: 'spouse_of' }));
    await expectTaken(() => ({ donor_id: a, related_donor_id: b, type: 'partner_of' }));
    // A past partner of c's does not count; other relationships of a's are free.
    await relate({ donor_id: a, related_donor_id: c, type: 'partner_of', ends_on: YESTERDAY });
    await relate({ donor_id: a, related_donor_id: c, type: 'sibling_of' });
    await relate({ donor_id: c, related_donor_id: d, type: 'partner_of' });
    // Once the marriage has ended, a may marry again.
    const ended = await service.call('PATCH', `/api/v1/relationships/${marriage.id}`, {
      body: { ends_on: YESTERDAY },
    });
    expect(ended.status).toBe(200);
    await relate({ donor_id: b, related_donor_id: a, type: 'partner_of' });
  });

  test('two concurrent creates of the same current pair: exactly one commits', async () => {
    const [a, b] = [await donor(), await donor()];
    const body = { donor_id: a, related_donor_id: b, type: 'sibling_of' };
    // Both writes reach the worker while the donor is held, so both judge it once it is free.
    const hold = await holdDonorRow(service.db, Math.min(a, b));
    const waitsBefore = await lockWaits();
    const answers = [
      service.call('POST', '/api/v1/relationships', { body }),
      service.call('POST', '/api/v1/relationships', {
        body: { donor_id: b, related_donor_id: a, type: 'sibling_of' },
      }),
    ];
    await waitFor(async () => (await lockWaits()) >= waitsBefore + 2, 10_000, 'both writes');
    await hold.release();
    const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 422]);
    const rows = await service.db.anyFirst(
      sql.unsafe`SELECT id FROM relationships WHERE donor_id IN (${a}, ${b})`,
    );
    expect(rows).toHaveLength(1);
  });

  test('two concurrent spouses of one Individual: exactly one commits', async () => {
    const [a, b, c] = [await donor(), await donor(), await donor()];
    const hold = await holdDonorRow(service.db, a);
    const waitsBefore = await lockWaits();
    const answers = [
      service.call('POST', '/api/v1/relationships', {
        body: { donor_id: a, related_donor_id: b, type: 'spouse_of' },
      }),
      service.call('POST', '/api/v1/relationships', {
        body: { donor_id: c, related_donor_id: a, type: 'partner_of' },
      }),
    ];
    await waitFor(async () => (await lockWaits()) >= waitsBefore + 2, 10_000, 'both writes');
    await hold.release();
    const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 422]);
    const current = await service.db.anyFirst(sql.unsafe`
      SELECT id FROM relationships
      WHERE (donor_id = ${a} OR related_donor_id = ${a}) AND type IN ('spouse_of', 'partner_of')`);
    expect(current).toHaveLength(1);
  });
});

describe('two updates that would make two current spouses', () => {
  test('exactly one commits', async () => {
    const [a, b, c] = [await donor(), await donor(), await donor()];
    const first = await relate({
      donor_id: a,
      related_donor_id: b,
      type: 'spouse_of',
      ends_on: YESTERDAY,
    });
    const second = await relate({
      donor_id: c,
      related_donor_id: a,
      type: 'partner_of',
      ends_on: YESTERDAY,
    });
    const hold = await holdDonorRow(service.db, a);
    const waitsBefore = await lockWaits();
    const answers = [first, second].map(({ id }) =>
      service.call('PATCH', `/api/v1/relationships/${id}`, { body: { ends_on: null } }),
    );
    await waitFor(async () => (await lockWaits()) >= waitsBefore + 2, 10_000, 'both writes');
    await hold.release();
    const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 422]);
    const current = await service.db.anyFirst(sql.unsafe`
      SELECT id FROM relationships WHERE id IN (${first.id}, ${second.id}) AND ends_on IS NULL`);
    expect(current).toHaveLength(1);
  });
});

describe('a relationship’s update racing its donor’s delete', () => {
  test('the delete takes the relationship with it; the update finds it gone (404), no deadlock', async () => {
    const [a, b] = [await donor(), await donor()];
    const made = await relate({ donor_id: a, related_donor_id: b, type: 'other' });
    // The delete reaches the donor first; the update comes while it waits. Both wait for the hold.
    const hold = await holdDonorRow(service.db, a);
    const waitsBefore = await lockWaits();
    const deletion = service.call('DELETE', `/api/v1/donors/${a}`);
    await waitFor(async () => (await lockWaits()) >= waitsBefore + 1, 10_000, 'the delete');
    const update = service.call('PATCH', `/api/v1/relationships/${made.id}`, {
      body: { note: 'Changed meanwhile' },
    });
    await waitFor(async () => (await lockWaits()) >= waitsBefore + 2, 10_000, 'the update');
    // The update waits for the donor without holding the relationship, which the delete's cascade
    // must lock: had it taken the relationship first, the two would wait for each other.
    const relationshipFree = await service.db.transaction(async (tx) =>
      tx.exists(sql.unsafe`
        SELECT 1 FROM relationships WHERE id = ${made.id} FOR UPDATE SKIP LOCKED`),
    );
    expect(relationshipFree).toBe(true);
    await hold.release();
    expect((await deletion).status).toBe(200);
    expect((await update).status).toBe(404);
    expect(
      await service.db.exists(sql.unsafe`SELECT 1 FROM relationships WHERE id = ${made.id}`),
    ).toBe(false);
  });
});

describe('GET /donors/{id}/relationships', () => {
  test('lists every relationship of the donor from its side, with the reciprocal type', async () => {
    const [parent, child, employer, stranger] = [
      await donor(),
      await donor(),
      await donor('Foundation'),
      await donor(),
    ];
    const family = await relate({ donor_id: parent, related_donor_id: child, type: 'parent_of' });
    const job = await relate({
      donor_id: child,
      related_donor_id: employer,
      type: 'board_member_of',
      ends_on: YESTERDAY,
      note: 'Former trustee',
    });
    await relate({ donor_id: stranger, related_donor_id: employer, type: 'employee_of' });

    const fromChild = await listOf(child);
    expect(fromChild.url).toBe(`/api/v1/donors/${child}/relationships`);
    expect(fromChild.data).toEqual([
      job,
      {
        ...family,
        donor_id: child,
        related_donor_id: parent,
        type: 'child_of',
      },
    ]);
    expect((await listOf(parent)).data).toEqual([family]);
    const fromEmployer = await listOf(employer);
    expect(fromEmployer.data.map((r) => [r.donor_id, r.related_donor_id, r.type])).toEqual([
      [employer, stranger, 'employer_of'],
      [employer, child, 'has_board_member'],
    ]);
    expect(fromEmployer.data[1]).toMatchObject({ is_current: false, note: 'Former trustee' });
  });

  test('pages with cursors that belong to their donor', async () => {
    const [hub, x, y, z] = [await donor(), await donor(), await donor(), await donor()];
    const made = [
      await relate({ donor_id: hub, related_donor_id: x, type: 'other' }),
      await relate({ donor_id: y, related_donor_id: hub, type: 'advisor_of' }),
      await relate({ donor_id: hub, related_donor_id: z, type: 'sibling_of' }),
    ];
    const first = await listOf(hub, '?limit=2');
    expect(first.has_more).toBe(true);
    expect(first.data.map((r) => r.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(first.data[1]).toMatchObject({ donor_id: hub, related_donor_id: y, type: 'advised_by' });
    const second = await listOf(hub, `?limit=2&starting_after=${first.next_cursor}`);
    expect(second.data.map((r) => r.id)).toEqual([made[0]!.id]);
    expect(second.has_more).toBe(false);
    const elsewhere = await service.call(
      'GET',
      `/api/v1/donors/${x}/relationships?starting_after=${first.next_cursor}`,
    );
    expect(elsewhere.status).toBe(400);
    expect((elsewhere.body as { error: { code: string } }).error.code).toBe('invalid_cursor');
  });

  test('a donor of another institution is as absent as a missing one; no list of every relationship', async () => {
    const theirs = await donor('Individual', other.key);
    const foreign = await service.call('GET', `/api/v1/donors/${theirs}/relationships`);
    const missing = await service.call('GET', '/api/v1/donors/999999999/relationships');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body).toEqual({
      ...missing.body,
      error: {
        ...(missing.body as { error: object }).error,
        request_id: foreign.headers.get('Request-Id'),
      },
    });
    const all = await service.call('GET', '/api/v1/relationships');
    expect(all.status).toBe(405);
    expect(all.headers.get('Allow')).toBe('POST');
  });
});

describe('PATCH and DELETE /relationships/{id}', () => {
  test('an update changes type, dates and note; its event carries the old values', async () => {
    const [a, b] = [await donor(), await donor()];
    const made = await relate({
      donor_id: a,
      related_donor_id: b,
      type: 'other',
      note: 'Met at gala',
    });
    const body = { type: 'sibling_of', starts_on: '1980-01-01', ends_on: '2030-12-31', note: null };
    const dry = await service.call<Relationship>(
      'PATCH',
      `/api/v1/relationships/${made.id}?dry_run=true`,
      { body },
    );
    expect(dry.status).toBe(200);
    expect(
      await service.db.oneFirst(sql.unsafe`SELECT type FROM relationships WHERE id = ${made.id}`),
    ).toBe('other');
    const response = await service.call<Relationship>('PATCH', `/api/v1/relationships/${made.id}`, {
      body,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...made,
      ...body,
      is_current: true,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(dry.body).toEqual({ ...response.body, updated_at: expect.stringMatching(ISO_MS) });
    const events = await eventsOf(made.id);
    expect(events.map((event) => event.type)).toEqual([
      'relationship.updated',
      'relationship.created',
    ]);
    expect(events[0]!.data.previous_attributes).toEqual({
      type: 'other',
      starts_on: null,
      ends_on: null,
      note: 'Met at gala',
    });
  });

  test('the donors stay: another donor is not_allowed, the same one is accepted', async () => {
    const [a, b, c] = [await donor(), await donor(), await donor()];
    const made = await relate({ donor_id: a, related_donor_id: b, type: 'other' });
    const path = `/api/v1/relationships/${made.id}`;
    await expectSameFailureThreeWays(
      service,
      path,
      'PATCH',
      { donor_id: c, related_donor_id: a },
      [
        { param: 'donor_id', code: 'not_allowed' },
        { param: 'related_donor_id', code: 'not_allowed' },
      ],
      relationshipRows,
    );
    const same = await service.call('PATCH', path, { body: { donor_id: a, note: 'Same donors' } });
    expect(same.status).toBe(200);
  });

  test('an update is judged by the same rules', async () => {
    const [a, b, c, company] = [
      await donor(),
      await donor(),
      await donor(),
      await donor('Organization'),
    ];
    await relate({ donor_id: a, related_donor_id: b, type: 'spouse_of' });
    const sibling = await relate({ donor_id: a, related_donor_id: c, type: 'sibling_of' });
    const past = await relate({
      donor_id: b,
      related_donor_id: a,
      type: 'spouse_of',
      ends_on: YESTERDAY,
    });
    const job = await relate({ donor_id: a, related_donor_id: company, type: 'employee_of' });
    const cases: Array<[number, Record<string, unknown>, Array<{ param: string; code: string }>]> =
      [
        [sibling.id, { type: 'spouse_of' }, [{ param: 'type', code: 'already_in_use' }]],
        [past.id, { ends_on: null }, [{ param: 'type', code: 'already_in_use' }]],
        [past.id, { starts_on: '2026-07-01' }, [{ param: 'ends_on', code: 'out_of_range' }]],
        [job.id, { type: 'parent_of' }, [{ param: 'type', code: 'invalid_value' }]],
        [job.id, { type: 'employer_of' }, [{ param: 'type', code: 'invalid_value' }]],
        [job.id, { note: 'n'.repeat(501) }, [{ param: 'note', code: 'too_long' }]],
      ];
    for (const [id, body, expected] of cases)
      await expectSameFailureThreeWays(
        service,
        `/api/v1/relationships/${id}`,
        'PATCH',
        body,
        expected,
        relationshipRows,
      );
  });

  test('a delete removes the relationship from both sides, with one event', async () => {
    const [a, b] = [await donor(), await donor()];
    const made = await relate({ donor_id: a, related_donor_id: b, type: 'other' });
    const dry = await service.call('DELETE', `/api/v1/relationships/${made.id}?dry_run=true`);
    expect(dry.status).toBe(200);
    expect((await listOf(b)).data).toHaveLength(1);
    const response = await service.call('DELETE', `/api/v1/relationships/${made.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: made.id, object: 'relationship', deleted: true });
    expect((await service.call('GET', `/api/v1/relationships/${made.id}`)).status).toBe(404);
    expect((await listOf(a)).data).toEqual([]);
    expect((await listOf(b)).data).toEqual([]);
    expect((await eventsOf(made.id)).map((event) => event.type)).toEqual([
      'relationship.deleted',
      'relationship.created',
    ]);
  });

  test('another institution’s relationship is as absent as a missing one, for GET, PATCH and DELETE', async () => {
    const [x, y] = [await donor('Individual', other.key), await donor('Individual', other.key)];
    const theirs = await relate({ donor_id: x, related_donor_id: y, type: 'other' }, other.key);
    for (const [method, body] of [['GET'], ['PATCH', { note: 'Mine now' }], ['DELETE']] as const) {
      const foreign = await service.call(method, `/api/v1/relationships/${theirs.id}`, { body });
      const missing = await service.call(method, '/api/v1/relationships/999999999', { body });
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect((foreign.body as { error: { message: string } }).error.message).toBe(
        (missing.body as { error: { message: string } }).error.message,
      );
    }
    expect(
      await service.db.one(sql.unsafe`SELECT note FROM relationships WHERE id = ${theirs.id}`),
    ).toEqual({ note: null });
  });
});

describe('deleting a donor', () => {
  test('deletes its relationships, from either side, in the same write: only donor.deleted', async () => {
    const [doomed, kept, bystander] = [await donor(), await donor(), await donor()];
    const written = await relate({ donor_id: doomed, related_donor_id: kept, type: 'sibling_of' });
    const received = await relate({ donor_id: kept, related_donor_id: doomed, type: 'other' });
    const unrelated = await relate({ donor_id: kept, related_donor_id: bystander, type: 'other' });
    const dry = await service.call('DELETE', `/api/v1/donors/${doomed}?dry_run=true`);
    expect(dry.status).toBe(200);
    expect((await listOf(kept)).data).toHaveLength(3);

    const response = await service.call('DELETE', `/api/v1/donors/${doomed}`);
    expect(response.status).toBe(200);
    expect((await listOf(kept)).data.map((r) => r.id)).toEqual([unrelated.id]);
    for (const { id } of [written, received]) {
      expect((await service.call('GET', `/api/v1/relationships/${id}`)).status).toBe(404);
      expect((await eventsOf(id)).map((event) => event.type)).toEqual(['relationship.created']);
    }
    const requestId = response.headers.get('Request-Id');
    const ofRequest = await service.db.anyFirst(
      sql.unsafe`SELECT type FROM events WHERE request_id = ${requestId}`,
    );
    expect(ofRequest).toEqual(['donor.deleted']);
  });
});
