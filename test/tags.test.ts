// Tags: the resource itself, and donors' tag_ids and ?tag_id= filter.
import { sql } from 'slonik';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { secondWaitsForFirst } from './helpers/rowLock.js';

interface Tag {
  id: number;
  object: string;
  name: string;
  color: string | null;
  created_at: string;
  updated_at: string;
}

interface Donor {
  id: number;
  email: string;
  tag_ids: number[];
  updated_at: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

let service: TestService;
let other: Tenant;
let tagCounter = 0;

const createTag = (body: Record<string, unknown> = {}, key?: string) =>
  created<Tag>(
    service.call('POST', '/api/v1/tags', { key, body: { name: `Tag ${++tagCounter}`, ...body } }),
  );

const createDonor = (tagIds: number[], key?: string) =>
  created<Donor>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: {
        role: 'Individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: `ada${++tagCounter}@example.org`,
        tag_ids: tagIds,
      },
    }),
  );

const tagRows = async () =>
  service.db.any(sql.unsafe`SELECT id, name, color FROM tags ORDER BY id`);
const donorTags = async () =>
  service.db.any(sql.unsafe`SELECT id, tag_ids FROM donors ORDER BY id`);
/** Donors (of those with these emails, or any) whose tag_ids name a tag that does not exist. */
const danglingDonors = (emails?: string[]) =>
  service.db.anyFirst(sql.unsafe`
    SELECT d.id FROM donors d
    WHERE d.tag_ids <> '{}'
      AND NOT (d.tag_ids <@ ARRAY(SELECT id FROM tags t WHERE t.institution_id = d.institution_id))
      ${emails ? sql.fragment`AND d.email = ANY(${sql.array(emails, 'text')})` : sql.fragment``}`);
/** Statements of this file's database waiting for a lock. */
const lockWaits = () =>
  service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  await createTag({ name: 'Board member' });
});

afterAll(async () => {
  await service?.close();
});

describe('POST /tags', () => {
  test('creates a tag: 201 with Location, the color in capitals, and GET answers the same', async () => {
    const response = await service.call<Tag>('POST', '/api/v1/tags', {
      body: { name: '  Reunion 2026 ', color: '#1f6feb' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'tag',
      name: 'Reunion 2026',
      color: '#1F6FEB',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(response.headers.get('Location')).toBe(`/api/v1/tags/${response.body.id}`);
    const read = await service.call<Tag>('GET', `/api/v1/tags/${response.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
  });

  test('color is optional (null)', async () => {
    expect((await createTag()).color).toBeNull();
  });

  test('a dry run answers the tag it would create, with id 0, and writes nothing', async () => {
    const before = await tagRows();
    const response = await service.call<Tag>('POST', '/api/v1/tags?dry_run=true', {
      body: { name: 'Never stored', color: '#ABCDEF' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 0, object: 'tag', name: 'Never stored' });
    expect(response.headers.get('Location')).toBeNull();
    expect(await tagRows()).toEqual(before);
  });

  test('a retry with the same Idempotency-Key replays the tag and writes one row', async () => {
    const body = { name: 'Retried tag' };
    const first = await service.call<Tag>('POST', '/api/v1/tags', {
      body,
      headers: { 'Idempotency-Key': 'tag-once' },
    });
    const second = await service.call<Tag>('POST', '/api/v1/tags', {
      body,
      headers: { 'Idempotency-Key': 'tag-once' },
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    const rows = await service.db.anyFirst(
      sql.unsafe`SELECT id FROM tags WHERE name = 'Retried tag'`,
    );
    expect(rows).toHaveLength(1);
  });

  const cases: Array<[string, Record<string, unknown>, Array<{ param: string; code: string }>]> = [
    ['name missing', { color: '#000000' }, [{ param: 'name', code: 'required' }]],
    ['name blank', { name: '  ' }, [{ param: 'name', code: 'required' }]],
    ['name of 101 characters', { name: 'n'.repeat(101) }, [{ param: 'name', code: 'too_long' }]],
    [
      'name taken, in another letter case',
      { name: 'BOARD MEMBER' },
      [{ param: 'name', code: 'already_in_use' }],
    ],
    [
      'color without #',
      { name: 'A', color: '1F6FEB' },
      [{ param: 'color', code: 'invalid_format' }],
    ],
    [
      'color of three digits',
      { name: 'B', color: '#FFF' },
      [{ param: 'color', code: 'invalid_format' }],
    ],
    ['color as a number', { name: 'C', color: 255 }, [{ param: 'color', code: 'invalid_type' }]],
    ['a read-only field', { name: 'D', id: 5 }, [{ param: 'id', code: 'unknown_field' }]],
    [
      'an unknown field',
      { name: 'E', colour: '#000000' },
      [{ param: 'colour', code: 'unknown_field' }],
    ],
  ];
  test.each(cases)(
    '%s: 422 from the real call and both dry runs, nothing written',
    async (_name, body, expected) => {
      await expectSameFailureThreeWays(service, '/api/v1/tags', 'POST', body, expected, tagRows);
    },
  );
});

describe('PATCH and DELETE /tags/{id}', () => {
  test('an update renames and clears the color with null', async () => {
    const tag = await createTag({ color: '#00FF00' });
    const response = await service.call<Tag>('PATCH', `/api/v1/tags/${tag.id}`, {
      body: { name: 'Renamed', color: null },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: tag.id, name: 'Renamed', color: null });
    expect(
      await service.db.one(sql.unsafe`SELECT name, color FROM tags WHERE id = ${tag.id}`),
    ).toEqual({
      name: 'Renamed',
      color: null,
    });
  });

  test('another institution’s tag is as absent as a missing one, for GET, PATCH and DELETE', async () => {
    const theirs = await createTag({}, other.key);
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Mine now' }], ['DELETE']] as const) {
      const foreign = await service.call(method, `/api/v1/tags/${theirs.id}`, { body });
      const missing = await service.call(method, `/api/v1/tags/999999999`, { body });
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect((foreign.body as { error: { message: string } }).error.message).toBe(
        (missing.body as { error: { message: string } }).error.message,
      );
    }
    expect(
      await service.db.oneFirst(sql.unsafe`SELECT name FROM tags WHERE id = ${theirs.id}`),
    ).toBe(theirs.name);
  });

  test('deleting a tag takes it off every donor that carries it, and the donors stay', async () => {
    const doomed = await createTag();
    const kept = await createTag();
    const donor = await createDonor([kept.id, doomed.id]);
    const bystander = await createDonor([kept.id]);

    const dry = await service.call('DELETE', `/api/v1/tags/${doomed.id}?dry_run=true`);
    expect(dry.status).toBe(200);
    expect(await service.count('tags')).toBeGreaterThan(0);
    expect((await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`)).body.tag_ids).toEqual([
      kept.id,
      doomed.id,
    ]);

    const response = await service.call('DELETE', `/api/v1/tags/${doomed.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: doomed.id, object: 'tag', deleted: true });
    expect((await service.call('GET', `/api/v1/tags/${doomed.id}`)).status).toBe(404);
    const after = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect(after.body.tag_ids).toEqual([kept.id]);
    expect(after.body.updated_at > donor.updated_at).toBe(true);
    const untouched = await service.call<Donor>('GET', `/api/v1/donors/${bystander.id}`);
    expect(untouched.body).toMatchObject({ tag_ids: [kept.id], updated_at: bystander.updated_at });
  });
});

describe('donors’ tag_ids', () => {
  test('a donor keeps its tags in the order given, on create, GET and the list', async () => {
    const [a, b] = [await createTag(), await createTag()];
    const donor = await createDonor([b.id, a.id]);
    expect(donor.tag_ids).toEqual([b.id, a.id]);
    expect((await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`)).body.tag_ids).toEqual([
      b.id,
      a.id,
    ]);
    const page = await service.call<Page<Donor>>('GET', `/api/v1/donors?tag_id=${a.id}`);
    expect(page.body.data.map((d) => d.id)).toEqual([donor.id]);
  });

  test('a donor without tags has tag_ids []', async () => {
    const response = await service.call<Donor>('POST', '/api/v1/donors', {
      body: { role: 'Household', last_name: 'Babbage', email: 'babbage@example.org' },
    });
    expect(response.status).toBe(201);
    expect(response.body.tag_ids).toEqual([]);
  });

  test('an update replaces the tags; [] clears them', async () => {
    const [a, b] = [await createTag(), await createTag()];
    const donor = await createDonor([a.id]);
    const replaced = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { tag_ids: [a.id, b.id] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.tag_ids).toEqual([a.id, b.id]);
    const cleared = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { tag_ids: [] },
    });
    expect(cleared.body.tag_ids).toEqual([]);
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT cardinality(tag_ids) FROM donors WHERE id = ${donor.id}`,
      ),
    ).toBe(0);
  });

  test('GET /donors?tag_id= pages through exactly the tagged donors, the filter pinned in the cursor', async () => {
    const tag = await createTag();
    const tagged = [
      await createDonor([tag.id]),
      await createDonor([]),
      await createDonor([tag.id]),
      await createDonor([tag.id]),
    ]
      .filter((donor) => donor.tag_ids.length)
      .map((donor) => donor.id)
      .reverse();
    const first = await service.call<Page<Donor>>('GET', `/api/v1/donors?tag_id=${tag.id}&limit=2`);
    expect(first.body.data.map((d) => d.id)).toEqual(tagged.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const second = await service.call<Page<Donor>>(
      'GET',
      `/api/v1/donors?limit=2&starting_after=${encodeURIComponent(first.body.next_cursor!)}`,
    );
    expect(second.body.data.map((d) => d.id)).toEqual(tagged.slice(2));
    expect(second.body.has_more).toBe(false);
    const changed = await service.call(
      'GET',
      `/api/v1/donors?tag_id=${tag.id + 1}&starting_after=${encodeURIComponent(first.body.next_cursor!)}`,
    );
    expect(changed.status).toBe(400);
  });

  test('another institution’s tag filters to an empty page, never an error', async () => {
    const theirs = await createTag({}, other.key);
    await createDonor([theirs.id], other.key);
    const page = await service.call<Page<Donor>>('GET', `/api/v1/donors?tag_id=${theirs.id}`);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([]);
  });

  test('another institution’s tag is refused exactly as a missing one, and nothing is written', async () => {
    const theirs = await createTag({}, other.key);
    const mine = await createTag();
    const body = (id: number) => ({
      role: 'Individual',
      first_name: 'A',
      last_name: 'B',
      email: 'nobody@example.org',
      tag_ids: [mine.id, id],
    });
    for (const id of [theirs.id, 999999999]) {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/donors',
        'POST',
        body(id),
        [{ param: 'tag_ids.1', code: 'reference_not_found' }],
        donorTags,
      );
    }
  });

  const bad: Array<[string, unknown, Array<{ param: string; code: string }>]> = [
    ['a tag twice', 'twice', [{ param: 'tag_ids.2', code: 'invalid_value' }]],
    ['an id that is not an integer', [1.5], [{ param: 'tag_ids.0', code: 'invalid_type' }]],
    ['an id that is a string', ['7'], [{ param: 'tag_ids.0', code: 'invalid_type' }]],
    ['not an array', 7, [{ param: 'tag_ids', code: 'invalid_type' }]],
    ['null', null, [{ param: 'tag_ids', code: 'invalid_type' }]],
    [
      '51 tags',
      Array.from({ length: 51 }, (_, i) => i + 1),
      [{ param: 'tag_ids', code: 'out_of_range' }],
    ],
  ];
  test.each(bad)(
    'tag_ids with %s: 422 three ways, nothing written',
    async (_name, value, expected) => {
      const [tag, another] = [await createTag(), await createTag()];
      const ids = value === 'twice' ? [tag.id, another.id, tag.id] : value;
      await expectSameFailureThreeWays(
        service,
        '/api/v1/donors',
        'POST',
        {
          role: 'Individual',
          first_name: 'A',
          last_name: 'B',
          email: 'nobody@example.org',
          tag_ids: ids,
        },
        expected,
        donorTags,
      );
    },
  );

  test('a tag deleted while donors are being tagged with it leaves no donor pointing at it', async () => {
    for (let round = 0; round < 8; round++) {
      const [tag, extra] = [await createTag(), await createTag()];
      const holder = await createDonor([tag.id]);
      const newcomer = await createDonor([]);
      const [keep, add, remove] = await Promise.all([
        // Keeps the tag being deleted and adds another.
        service.call('PATCH', `/api/v1/donors/${holder.id}`, {
          body: { first_name: `Round ${round}`, tag_ids: [tag.id, extra.id] },
        }),
        service.call('PATCH', `/api/v1/donors/${newcomer.id}`, { body: { tag_ids: [tag.id] } }),
        service.call('DELETE', `/api/v1/tags/${tag.id}`),
      ]);
      // Each tagging ran before the delete (which then took the tag off) or was refused after it
      // (422); none may fail, as a deadlock between the two would.
      expect(remove.status).toBe(200);
      expect([200, 422]).toContain(keep.status);
      expect([200, 422]).toContain(add.status);
      expect(await danglingDonors()).toEqual([]);
    }
  });

  // The test above fires the writes at once and cannot say which order they ran in; here each
  // order is forced: the first write is held just before its commit (its checks and changes
  // done, its locks held) while the second is sent, and must wait for it rather than act on
  // what the first has not committed.
  type Write = 'create' | 'add' | 'keep' | 'delete';
  const orders: [
    string,
    Write,
    Write,
    { first: number; second: number; tags: 'none' | 'extra' },
  ][] = [
    [
      'a PATCH adding the tag, then its DELETE',
      'add',
      'delete',
      { first: 200, second: 200, tags: 'extra' },
    ],
    [
      'its DELETE, then a PATCH adding the tag',
      'delete',
      'add',
      { first: 200, second: 422, tags: 'none' },
    ],
    [
      'a PATCH keeping the tag, then its DELETE',
      'keep',
      'delete',
      { first: 200, second: 200, tags: 'extra' },
    ],
    [
      'its DELETE, then a PATCH keeping the tag',
      'delete',
      'keep',
      { first: 200, second: 422, tags: 'none' },
    ],
    [
      'a donor created with the tag, then its DELETE',
      'create',
      'delete',
      { first: 201, second: 200, tags: 'none' },
    ],
    [
      'its DELETE, then a donor created with the tag',
      'delete',
      'create',
      { first: 200, second: 422, tags: 'none' },
    ],
  ];
  test.each(orders)(
    'a tag DELETE racing a donor write, forced in each order: %s; no donor is left pointing at the tag',
    async (_order, firstWrite, secondWrite, expected) => {
      const [tag, extra] = [await createTag(), await createTag()];
      const holder = await createDonor(
        firstWrite === 'keep' || secondWrite === 'keep' ? [tag.id] : [],
      );
      const email = `raced${++tagCounter}@example.org`;
      const send = (write: Write, headers: Record<string, string>) => {
        if (write === 'delete')
          return service.call('DELETE', `/api/v1/tags/${tag.id}`, { headers });
        if (write === 'create')
          return service.call<Donor>('POST', '/api/v1/donors', {
            headers,
            body: { role: 'Individual', first_name: 'A', last_name: 'B', email, tag_ids: [tag.id] },
          });
        return service.call<Donor>('PATCH', `/api/v1/donors/${holder.id}`, {
          headers,
          body: { tag_ids: [tag.id, extra.id] },
        });
      };
      const {
        early,
        first: one,
        second: two,
      } = await secondWaitsForFirst(service.db, service.tenant.institutionId, {
        key: `raced-${tagCounter}`,
        first: async (key) => send(firstWrite, { 'Idempotency-Key': key }),
        second: async () => send(secondWrite, {}),
        waits: lockWaits,
      });
      const written = secondWrite === 'create' ? two : firstWrite === 'create' ? one : null;
      const donorId = written?.status === 201 ? (written.body as Donor).id : holder.id;
      const tagIds = await service.db.oneFirst(
        sql.unsafe`SELECT to_jsonb(tag_ids) FROM donors WHERE id = ${donorId}`,
      );
      expect({ early, first: one.status, second: two.status, tag_ids: tagIds }).toEqual({
        early: undefined,
        first: expected.first,
        second: expected.second,
        tag_ids: expected.tags === 'extra' ? [extra.id] : [],
      });
      if (expected.second === 422)
        expect(two.body).toMatchObject({
          error: {
            code: 'validation_failed',
            errors: [{ param: 'tag_ids.0', code: 'reference_not_found' }],
          },
        });
      expect(
        await service.db.maybeOne(sql.unsafe`SELECT id FROM tags WHERE id = ${tag.id}`),
      ).toBeNull();
      expect(await danglingDonors([holder.email, email])).toEqual([]);
    },
  );

  test('a PATCH of a missing donor is 404 before its tags are judged', async () => {
    await expectSameErrorThreeWays(
      service,
      '/api/v1/donors/999999999',
      'PATCH',
      { tag_ids: [999999998] },
      { status: 404, code: 'resource_not_found' },
      donorTags,
    );
  });
});
