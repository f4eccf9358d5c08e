// Households (constituents.md §1): household_id on individuals, member_ids and the household's
// giving, GET /donors?household_id=, and the delete refused while members remain.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { create, other, service, setUpDonorTests, withKey, type Donor } from './helpers/donors.js';
import { rowErrors, settled, upload } from './helpers/imports.js';
import { secondWaitsForFirst } from './helpers/rowLock.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';

setUpDonorTests();

interface Member extends Donor {
  household_id: number | null;
  member_ids?: number[];
  giving?: Donor['giving'] & {
    soft_credit_total: number;
    soft_credit_count: number;
    pledged_outstanding: number;
  };
}

interface Page {
  data: Member[];
  has_more: boolean;
  next_cursor: string | null;
}

interface Event {
  type: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

let counter = 0;

const person = (extra: Record<string, unknown> = {}, key?: string) =>
  create(
    {
      role: 'Individual',
      first_name: 'Ada',
      last_name: `Lovelace ${++counter}`,
      email: `ada${counter}.${randomUUID()}@example.org`,
      ...extra,
    },
    key,
  ) as Promise<Member>;

const household = (key?: string) =>
  create({ role: 'Household', last_name: `Household ${++counter}` }, key) as Promise<Member>;

const read = async (id: number) => {
  const response = await service.call<Member>('GET', `/api/v1/donors/${id}`);
  expect(response.status).toBe(200);
  return response.body;
};

const patch = (id: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.call<Member>('PATCH', `/api/v1/donors/${id}`, { body, headers });

const join = async (memberId: number, householdId: number | null) => {
  const response = await patch(memberId, { household_id: householdId });
  expect(response.status).toBe(200);
  return response.body;
};

const gift = async (donorId: number, amount: number, extra: Record<string, unknown> = {}) => {
  const response = await service.call<{ id: number }>('POST', '/api/v1/gifts', {
    body: { donor_id: donorId, amount, subject: 'Annual fund', gift_date: '2026-03-15', ...extra },
    headers: withKey(),
  });
  expect(response.status).toBe(201);
  return response.body.id;
};

/** Every donor's household, as stored: what a refused write must leave as it was. */
const memberships = () =>
  service.db.any(sql.unsafe`SELECT id, household_id, role FROM donors ORDER BY id`);

const eventsOf = async (id: number) => {
  const page = await service.call<{ data: Event[] }>(
    'GET',
    `/api/v1/events?object_type=donor&object_id=${id}`,
  );
  expect(page.status).toBe(200);
  return page.body.data;
};

/** `count` new members of the household, created in it ten at a time; their ids. */
async function fillHousehold(householdId: number, count: number): Promise<number[]> {
  const ids: number[] = [];
  while (ids.length < count) {
    const batch = Math.min(10, count - ids.length);
    const members = await Promise.all(
      Array.from({ length: batch }, () => person({ household_id: householdId })),
    );
    ids.push(...members.map((member) => member.id));
  }
  return ids;
}

/** Statements of this file's database waiting for a lock. */
const lockWaits = () =>
  service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);

/**
 * Two writes for the last place of a household of 99 members: `first` held (its receipt key
 * locked) after it took the household, `second` then waiting for it. Once the first commits, the
 * second is refused (422 on household_id) and the household has 100 members.
 */
async function raceForLastPlace(writes: {
  first: (household: number, key: string) => Promise<{ status: number }>;
  second: (household: number) => Promise<{ status: number; body: unknown }>;
  created: number;
}): Promise<void> {
  const home = await household();
  await fillHousehold(home.id, 99);
  const {
    early,
    first: one,
    second: two,
  } = await secondWaitsForFirst(service.db, service.tenant.institutionId, {
    key: `last-place-${randomUUID()}`,
    first: (key) => writes.first(home.id, key),
    second: () => writes.second(home.id),
    waits: lockWaits,
  });
  expect({ early, first: one.status, second: two.status }).toEqual({
    early: undefined,
    first: writes.created,
    second: 422,
  });
  expect(two.body).toMatchObject({
    error: { errors: [{ param: 'household_id', code: 'invalid_value' }] },
  });
  expect(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM donors WHERE household_id = ${home.id}`,
    ),
  ).toBe(100);
}

describe('household_id and member_ids', () => {
  test('an Individual joins with PATCH: one donor.updated event on the member, and the household lists it', async () => {
    const home = await household();
    const member = await person();
    expect(member.household_id).toBeNull();

    const response = await patch(member.id, { household_id: home.id });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...member,
      household_id: home.id,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await read(member.id)).household_id).toBe(home.id);
    expect((await read(home.id)).member_ids).toEqual([member.id]);

    const events = await eventsOf(member.id);
    expect(events.map((event) => event.type)).toEqual(['donor.updated', 'donor.created']);
    expect(events[0]!.data.previous_attributes).toEqual({ household_id: null });
    expect((await eventsOf(home.id)).map((event) => event.type)).toEqual(['donor.created']);
  });

  test('a donor may be created in a household; member_ids are oldest first (by donor id), whatever the order of joining', async () => {
    const home = await household();
    const older = await person();
    const newer = await person({ household_id: home.id });
    expect(newer.household_id).toBe(home.id);
    await join(older.id, home.id);
    const read1 = await read(home.id);
    expect(read1.member_ids).toEqual([older.id, newer.id]);
    expect(read1.household_id).toBeNull();
  });

  test('null leaves the household: one event, and member_ids no longer list the donor', async () => {
    const home = await household();
    const member = await person({ household_id: home.id });
    const stays = await person({ household_id: home.id });
    const left = await join(member.id, null);
    expect(left.household_id).toBeNull();
    expect((await read(home.id)).member_ids).toEqual([stays.id]);
    const events = await eventsOf(member.id);
    expect(events.map((event) => event.type)).toEqual(['donor.updated', 'donor.created']);
    expect(events[0]!.data.previous_attributes).toEqual({ household_id: home.id });
  });

  test('member_ids is on GET of a Household only ([] without members); other donors and every other answer carry no member_ids', async () => {
    const home = await household();
    expect(home).not.toHaveProperty('member_ids');
    expect(home.household_id).toBeNull();
    expect((await read(home.id)).member_ids).toEqual([]);
    const alone = await person();
    expect(await read(alone.id)).not.toHaveProperty('member_ids');
    const page = await service.call<Page>('GET', `/api/v1/donors?role=Household&limit=100`);
    expect(page.status).toBe(200);
    for (const donor of page.body.data) expect(donor).not.toHaveProperty('member_ids');
    const renamed = await patch(home.id, { last_name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).not.toHaveProperty('member_ids');
  });

  test('a dry run of a join answers what the real call answers and writes nothing', async () => {
    const home = await household();
    const member = await person();
    for (const [query, headers] of [
      ['?dry_run=true', {}],
      ['', { 'Dry-Run': 'true' }],
    ] as const) {
      const dry = await service.call<Member>('PATCH', `/api/v1/donors/${member.id}${query}`, {
        body: { household_id: home.id },
        headers,
      });
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({
        ...member,
        household_id: home.id,
        updated_at: expect.stringMatching(ISO_MS),
      });
    }
    expect((await read(member.id)).household_id).toBeNull();
    expect((await read(home.id)).member_ids).toEqual([]);
    expect(await eventsOf(member.id)).toHaveLength(1);

    const real = await patch(member.id, { household_id: home.id });
    expect(real.body).toEqual({
      ...member,
      household_id: home.id,
      updated_at: real.body.updated_at,
    });
  });

  test('an Idempotency-Key replays a join once (one event), and refuses the key for another household', async () => {
    const [home, elsewhere] = [await household(), await household()];
    const member = await person();
    const headers = { 'Idempotency-Key': `join-${randomUUID()}` };
    const first = await patch(member.id, { household_id: home.id }, headers);
    const second = await patch(member.id, { household_id: home.id }, headers);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await eventsOf(member.id)).toHaveLength(2);

    const mismatch = await patch(member.id, { household_id: elsewhere.id }, headers);
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toMatchObject({
      error: { code: 'idempotency_key_request_mismatch' },
    });
    expect((await read(member.id)).household_id).toBe(home.id);
    expect((await read(elsewhere.id)).member_ids).toEqual([]);
  });
});

describe('what household_id may name', () => {
  const individual = { role: 'Individual', first_name: 'A', last_name: 'B' };

  test('only an Individual belongs to a household (not_allowed), on create and on update', async () => {
    const home = await household();
    for (const body of [
      { role: 'Household', last_name: 'Nested', household_id: home.id },
      { role: 'Organization', organization_name: 'Acme', household_id: home.id },
      { role: 'Foundation', organization_name: 'Acme Trust', household_id: home.id },
    ]) {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/donors',
        'POST',
        body,
        [{ param: 'household_id', code: 'not_allowed' }],
        memberships,
        { headers: withKey },
      );
    }
    const org = await create({ role: 'Corporation', organization_name: 'Acme Corp' });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${org.id}`,
      'PATCH',
      { household_id: home.id },
      [{ param: 'household_id', code: 'not_allowed' }],
      memberships,
    );
    // A member that would stop being an Individual must leave first.
    const member = await person({ household_id: home.id });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${member.id}`,
      'PATCH',
      { role: 'Organization', first_name: null, organization_name: 'Lovelace Ltd' },
      [{ param: 'household_id', code: 'not_allowed' }],
      memberships,
    );
    const moved = await patch(member.id, {
      role: 'Organization',
      first_name: null,
      organization_name: 'Lovelace Ltd',
      household_id: null,
    });
    expect(moved.status).toBe(200);
  });

  test('a missing donor and another institution’s household are both reference_not_found, with the same message', async () => {
    const theirs = await household(other.key);
    const messages: string[] = [];
    for (const id of [theirs.id, 999_999_999]) {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/donors',
        'POST',
        { ...individual, household_id: id },
        [{ param: 'household_id', code: 'reference_not_found' }],
        memberships,
        { headers: withKey },
      );
      const member = await person();
      const response = await patch(member.id, { household_id: id });
      expect(response.status).toBe(422);
      const error = (response.body as unknown as { error: { errors: { message: string }[] } })
        .error;
      messages.push(error.errors[0]!.message);
    }
    expect(messages[0]).toBe(messages[1]);
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM donors WHERE household_id = ${theirs.id}`,
      ),
    ).toBe(0);
  });

  test('a donor that is not a Household is invalid_value', async () => {
    const spouse = await person();
    const org = await create({ role: 'Organization', organization_name: 'Acme Club' });
    for (const id of [spouse.id, org.id]) {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/donors',
        'POST',
        { ...individual, household_id: id },
        [{ param: 'household_id', code: 'invalid_value' }],
        memberships,
        { headers: withKey },
      );
    }
    const self = await person();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${self.id}`,
      'PATCH',
      { household_id: self.id },
      [{ param: 'household_id', code: 'invalid_value' }],
      memberships,
    );
  });

  test.each([
    ['a string', '7', 'invalid_type'],
    ['a fraction', 1.5, 'invalid_type'],
    ['zero', 0, 'out_of_range'],
    ['a negative id', -3, 'out_of_range'],
    ['an object', { id: 1 }, 'invalid_type'],
  ])('household_id as %s: 422 three ways, nothing written', async (_name, value, code) => {
    const member = await person();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${member.id}`,
      'PATCH',
      { household_id: value },
      [{ param: 'household_id', code }],
      memberships,
    );
  });

  test('a household takes 100 members: the next join is invalid_value three ways; members already in stay writable; a place freed is taken', async () => {
    const home = await household();
    const members = await fillHousehold(home.id, 100);
    const newcomer = await person();
    for (const [path, method, body] of [
      [`/api/v1/donors/${newcomer.id}`, 'PATCH', { household_id: home.id }],
      ['/api/v1/donors', 'POST', { ...individual, household_id: home.id }],
    ] as const) {
      await expectSameFailureThreeWays(
        service,
        path,
        method,
        body,
        [{ param: 'household_id', code: 'invalid_value' }],
        memberships,
        { headers: withKey },
      );
    }
    const stays = await patch(members[0]!, { first_name: 'Still here', household_id: home.id });
    expect(stays.status).toBe(200);
    await join(members[1]!, null);
    expect((await join(newcomer.id, home.id)).household_id).toBe(home.id);
    const read100 = await read(home.id);
    expect(read100.member_ids).toHaveLength(100);
    expect(read100.member_ids).toContain(newcomer.id);
  });

  test('two joins racing for the last place of a household: the second waits for the first and is refused', async () => {
    const [a, b] = [await person(), await person()];
    await raceForLastPlace({
      first: (home, key) => patch(a.id, { household_id: home }, { 'Idempotency-Key': key }),
      second: (home) => patch(b.id, { household_id: home }),
      created: 200,
    });
  });

  test('a member created with every field set is stored as the same create without a household would be', async () => {
    const tag = await service.call<{ id: number }>('POST', '/api/v1/tags', {
      body: { name: `Member tag ${randomUUID()}` },
    });
    expect(tag.status).toBe(201);
    const home = await household();
    const full = (n: string) => ({
      role: 'Individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: `grace.${n}.${randomUUID()}@example.org`,
      external_id: `ext-${randomUUID()}`,
      phone: '+1 202 555 0100',
      address: { line1: '1 Navy Way', city: 'Arlington', country: 'US' },
      status: 'deceased',
      deceased_on: '1992-01-01',
      gives_anonymously: true,
      tag_ids: [tag.body.id],
      communication_restrictions: ['do_not_mail'],
      emails: [{ address: `grace.${n}.work@example.org`, type: 'work' }],
      phones: [{ number: '+1 202 555 0101', type: 'mobile' }],
      addresses: [
        {
          line1: '2 Beach Road',
          city: 'Key West',
          country: 'US',
          type: 'seasonal',
          seasonal_from: '12-01',
          seasonal_to: '03-31',
        },
      ],
    });
    const solo = await person(full('solo'));
    const member = await person({ ...full('member'), household_id: home.id });
    const differing = [
      'id',
      'email',
      'external_id',
      'emails',
      'household_id',
      'created_at',
      'updated_at',
    ];
    const without = (donor: Member) =>
      Object.fromEntries(Object.entries(donor).filter(([name]) => !differing.includes(name)));
    expect(without(member)).toEqual(without(solo));
    expect(member.household_id).toBe(home.id);
    expect(await read(member.id)).toMatchObject({ ...without(solo), household_id: home.id });
  });

  test('two creates racing for the last place of a household: the second waits in its insert and is refused', async () => {
    const body = (name: string, home: number) => ({
      role: 'Individual',
      first_name: name,
      last_name: 'Racer',
      email: `${name.toLowerCase()}.${randomUUID()}@example.org`,
      household_id: home,
    });
    await raceForLastPlace({
      first: (home, key) =>
        service.call('POST', '/api/v1/donors', {
          body: body('First', home),
          headers: { 'Idempotency-Key': key },
        }),
      second: (home) => service.call('POST', '/api/v1/donors', { body: body('Second', home) }),
      created: 201,
    });
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM donors WHERE first_name = 'Second' AND last_name = 'Racer'`,
      ),
    ).toBe(0);
  });

  test('member_ids is read-only', async () => {
    const home = await household();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${home.id}`,
      'PATCH',
      { member_ids: [] },
      [{ param: 'member_ids', code: 'unknown_field' }],
      memberships,
    );
  });

  test('a Household with members keeps its role (409 resource_in_use); without members it may change', async () => {
    const home = await household();
    const member = await person({ household_id: home.id });
    await expectSameErrorThreeWays(
      service,
      `/api/v1/donors/${home.id}`,
      'PATCH',
      { role: 'Individual', first_name: 'Solo' },
      { status: 409, code: 'resource_in_use' },
      memberships,
    );
    await join(member.id, null);
    const changed = await patch(home.id, { role: 'Individual', first_name: 'Solo' });
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe('Individual');
  });
});

describe('imports', () => {
  test('a donors import’s household_id column is judged as the single write judges it', async () => {
    const home = await household();
    const theirs = await household(other.key);
    const single = await person();
    const tag = `imp${randomUUID().slice(0, 8)}`;
    const csv = [
      'role,first_name,last_name,organization_name,email,household_id',
      `Individual,Ann,Member,,${tag}a@example.org,${home.id}`,
      `Individual,Bob,Astray,,${tag}b@example.org,${single.id}`,
      `Household,,Nested,,${tag}c@example.org,${home.id}`,
      `Individual,Cy,Foreign,,${tag}d@example.org,${theirs.id}`,
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 3,
    });
    expect(
      (await rowErrors(service, answer.body.id)).map((row) =>
        row.errors.map(({ param, code }) => ({ row: row.row, param, code })),
      ),
    ).toEqual([
      [{ row: 3, param: 'household_id', code: 'invalid_value' }],
      [{ row: 4, param: 'household_id', code: 'not_allowed' }],
      [{ row: 5, param: 'household_id', code: 'reference_not_found' }],
    ]);
    const imported = await service.db.oneFirst(
      sql.unsafe`SELECT id FROM donors WHERE email = ${`${tag}a@example.org`}`,
    );
    expect((await read(home.id)).member_ids).toEqual([Number(imported)]);
  });
});

describe('DELETE of a household', () => {
  test('409 resource_in_use while it has members (real and dry run), 200 once they have left', async () => {
    const home = await household();
    const member = await person({ household_id: home.id });
    const before = await memberships();
    for (const query of ['', '?dry_run=true']) {
      const refused = await service.call('DELETE', `/api/v1/donors/${home.id}${query}`);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        error: { type: 'invalid_request_error', code: 'resource_in_use' },
      });
    }
    expect(await memberships()).toEqual(before);
    expect((await eventsOf(home.id)).map((event) => event.type)).toEqual(['donor.created']);

    await join(member.id, null);
    const removed = await service.call('DELETE', `/api/v1/donors/${home.id}`);
    expect(removed.status).toBe(200);
    expect((await service.call('GET', `/api/v1/donors/${home.id}`)).status).toBe(404);
    expect((await read(member.id)).household_id).toBeNull();
  });

  test('a member may be deleted: it leaves the household with it', async () => {
    const home = await household();
    const member = await person({ household_id: home.id });
    expect((await service.call('DELETE', `/api/v1/donors/${member.id}`)).status).toBe(200);
    expect((await read(home.id)).member_ids).toEqual([]);
  });

  // Each order is forced: the first write is held just before its commit (its checks and changes
  // done, its locks held) while the second is sent, and must wait for it rather than act on what
  // the first has not committed.
  type Write = 'join' | 'create' | 'delete' | 'role';
  const orders: [string, Write, Write, { first: number; second: number; member: boolean }][] = [
    ['a join, then the DELETE', 'join', 'delete', { first: 200, second: 409, member: true }],
    ['the DELETE, then a join', 'delete', 'join', { first: 200, second: 422, member: false }],
    [
      'a member created in it, then the DELETE',
      'create',
      'delete',
      { first: 201, second: 409, member: true },
    ],
    [
      'the DELETE, then a member created in it',
      'delete',
      'create',
      { first: 200, second: 422, member: false },
    ],
    ['a join, then a change of role', 'join', 'role', { first: 200, second: 409, member: true }],
    ['a change of role, then a join', 'role', 'join', { first: 200, second: 422, member: false }],
  ];
  test.each(orders)(
    'a household write racing a member joining, forced in each order: %s; no member is left in a household that is gone or is not one',
    async (_order, firstWrite, secondWrite, expected) => {
      const home = await household();
      const member = await person();
      const email = `raced${++counter}@example.org`;
      const send = (write: Write, headers: Record<string, string>) => {
        if (write === 'delete')
          return service.call('DELETE', `/api/v1/donors/${home.id}`, { headers });
        if (write === 'role')
          return service.call('PATCH', `/api/v1/donors/${home.id}`, {
            headers,
            body: { role: 'Organization', organization_name: 'No longer a home' },
          });
        if (write === 'create')
          return service.call<Member>('POST', '/api/v1/donors', {
            headers,
            body: {
              role: 'Individual',
              first_name: 'A',
              last_name: 'B',
              email,
              household_id: home.id,
            },
          });
        return service.call('PATCH', `/api/v1/donors/${member.id}`, {
          headers,
          body: { household_id: home.id },
        });
      };
      const {
        early,
        first: one,
        second: two,
      } = await secondWaitsForFirst(service.db, service.tenant.institutionId, {
        key: `raced-${randomUUID()}`,
        first: async (key) => send(firstWrite, { 'Idempotency-Key': key }),
        second: async () => send(secondWrite, withKey()),
        waits: lockWaits,
      });
      const members = await service.db.anyFirst(
        sql.unsafe`SELECT id FROM donors WHERE household_id = ${home.id}`,
      );
      expect({ early, first: one.status, second: two.status, members: members.length }).toEqual({
        early: undefined,
        first: expected.first,
        second: expected.second,
        members: expected.member ? 1 : 0,
      });
      const errorOf = (response: typeof two) =>
        (response.body as { error: { code: string; errors?: { param: string; code: string }[] } })
          .error;
      if (expected.second === 409) expect(errorOf(two).code).toBe('resource_in_use');
      if (expected.second === 422)
        expect(errorOf(two).errors).toEqual([
          expect.objectContaining({
            param: 'household_id',
            code: firstWrite === 'role' ? 'invalid_value' : 'reference_not_found',
          }),
        ]);
      // Whoever is a member is a member of a Household that exists.
      const stray = await service.db.anyFirst(sql.unsafe`
        SELECT m.id FROM donors m
        LEFT JOIN donors h ON h.institution_id = m.institution_id AND h.id = m.household_id
        WHERE m.household_id IS NOT NULL AND h.role IS DISTINCT FROM 'Household'`);
      expect(stray).toEqual([]);
    },
  );
});

describe('GET /donors?household_id=', () => {
  test('lists exactly the household’s current members, newest first, the filter pinned in the cursor', async () => {
    const home = await household();
    const a = await person({ household_id: home.id });
    await person();
    const b = await person({ household_id: home.id });
    const c = await person({ household_id: home.id });
    const gone = await person({ household_id: home.id });
    await join(gone.id, null);

    const first = await service.call<Page>('GET', `/api/v1/donors?household_id=${home.id}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((d) => d.id)).toEqual([c.id, b.id]);
    expect(first.body.has_more).toBe(true);
    const cursor = encodeURIComponent(first.body.next_cursor!);
    const second = await service.call<Page>(
      'GET',
      `/api/v1/donors?limit=2&starting_after=${cursor}`,
    );
    expect(second.body.data.map((d) => d.id)).toEqual([a.id]);
    expect(second.body.has_more).toBe(false);
    const changed = await service.call(
      'GET',
      `/api/v1/donors?household_id=${home.id + 1}&starting_after=${cursor}`,
    );
    expect(changed.status).toBe(400);
  });

  test('another institution’s household filters to an empty page; a bad id is 400', async () => {
    const theirs = await household(other.key);
    await person({ household_id: theirs.id }, other.key);
    const page = await service.call<Page>('GET', `/api/v1/donors?household_id=${theirs.id}`);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([]);
    for (const bad of ['abc', '0', '-1', '1.5']) {
      const response = await service.call('GET', `/api/v1/donors?household_id=${bad}`);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { param: 'household_id' } });
    }
  });
});

describe('household giving', () => {
  test('the household’s own gifts and its current members’ gifts, each once, net of refunds, voids left out; members’ own giving unchanged', async () => {
    const home = await household();
    const [ada, byron, outsider] = [await person(), await person(), await person()];
    await join(ada.id, home.id);
    await join(byron.id, home.id);

    await gift(home.id, 100, { gift_date: '2026-01-10' });
    // A member's gift soft-credited to the household: hard credit of the household, once.
    await gift(ada.id, 50, {
      gift_date: '2026-02-01',
      soft_credits: [{ donor_id: home.id, amount: 50, reason: 'household' }],
    });
    const refunded = await gift(byron.id, 40, { gift_date: '2026-03-01' });
    const refund = await service.call('POST', `/api/v1/gifts/${refunded}/refunds`, {
      body: { amount: 15, refund_date: '2026-03-02' },
      headers: withKey(),
    });
    expect(refund.status).toBe(201);
    const voided = await gift(byron.id, 1000, { gift_date: '2026-05-01' });
    expect(
      (
        await service.call('POST', `/api/v1/gifts/${voided}/void`, {
          body: { reason: 'Error' },
          headers: withKey(),
        })
      ).status,
    ).toBe(200);
    // Someone else's gift soft-credited to the household: soft credit.
    await gift(outsider.id, 30, {
      soft_credits: [{ donor_id: home.id, amount: 20, reason: 'household' }],
    });
    const pledge = await service.call('POST', '/api/v1/pledges', {
      body: {
        donor_id: ada.id,
        amount: 120,
        pledge_date: '2026-01-01',
        schedule: { frequency: 'monthly', installments: 2, first_due_on: '2026-06-30' },
      },
      headers: withKey(),
    });
    expect(pledge.status).toBe(201);

    const giving = (await read(home.id)).giving;
    expect(giving).toEqual({
      total_amount: 175,
      gift_count: 3,
      first_gift_date: '2026-01-10',
      last_gift_date: '2026-03-01',
      soft_credit_total: 20,
      soft_credit_count: 1,
      pledged_outstanding: 120,
    });
    expect((await read(ada.id)).giving).toEqual({
      total_amount: 50,
      gift_count: 1,
      first_gift_date: '2026-02-01',
      last_gift_date: '2026-02-01',
      soft_credit_total: 0,
      soft_credit_count: 0,
      pledged_outstanding: 120,
    });
    expect((await read(byron.id)).giving).toMatchObject({ total_amount: 25, gift_count: 1 });

    // A member leaving takes its gifts and pledges out; the soft credit of its gift now counts.
    await join(ada.id, null);
    expect((await read(home.id)).giving).toEqual({
      total_amount: 125,
      gift_count: 2,
      first_gift_date: '2026-01-10',
      last_gift_date: '2026-03-01',
      soft_credit_total: 70,
      soft_credit_count: 2,
      pledged_outstanding: 0,
    });
    expect((await read(ada.id)).giving).toMatchObject({ total_amount: 50, gift_count: 1 });
  });
});
