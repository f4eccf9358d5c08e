// Campaigns (fundraising.md §3): the resource, its tree (parent_id: no cycles, bounded depth,
// moves serialised) and its delete while children or appeals point at it.
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { secondWaitsForFirst } from './helpers/rowLock.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

interface Campaign {
  id: number;
  object: string;
  name: string;
  code: string;
  parent_id: number | null;
  starts_on: string | null;
  ends_on: string | null;
  goal: number | null;
  status: string;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

interface Event {
  type: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

let service: TestService;
let other: Tenant;
let counter = 0;

const createCampaign = (body: Record<string, unknown> = {}, key?: string) =>
  created<Campaign>(
    service.call('POST', '/api/v1/campaigns', {
      key,
      body: { name: `Campaign ${++counter}`, code: `C-${counter}`, ...body },
    }),
  );

const patch = (id: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.call<Campaign>('PATCH', `/api/v1/campaigns/${id}`, { body, headers });

/** The stored campaigns, as the database holds them. */
const campaignRows = () =>
  service.db.any(sql.unsafe`
    SELECT id, institution_id, name, code, parent_id, starts_on::text, ends_on::text,
           goal::text, status
    FROM campaigns ORDER BY id`);

const storedCampaign = z.object({
  name: z.string(),
  code: z.string(),
  parent_id: z.number().nullable(),
  starts_on: z.string().nullable(),
  ends_on: z.string().nullable(),
  goal: z.string().nullable(),
  status: z.string(),
});

const storedRow = (id: number) =>
  service.db.one(sql.type(storedCampaign)`
    SELECT name, code, parent_id, starts_on::text, ends_on::text, goal::text, status
    FROM campaigns WHERE id = ${id}`);

const eventsOf = async (id: number) => {
  const page = await service.call<{ data: Event[] }>(
    'GET',
    `/api/v1/events?object_type=campaign&object_id=${id}`,
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

/** A chain of campaigns, each under the one before; answers their ids, top first. */
async function chain(length: number): Promise<number[]> {
  const ids: number[] = [];
  for (let level = 0; level < length; level++)
    ids.push((await createCampaign({ parent_id: ids.at(-1) ?? null })).id);
  return ids;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  await createCampaign({ name: 'Annual Fund 2026', code: 'AF26' });
});

afterAll(async () => {
  await service?.close();
});

describe('POST /campaigns', () => {
  test('creates a campaign: 201 with Location, GET answers the same, one event, the row stored', async () => {
    const parent = await createCampaign();
    const response = await service.call<Campaign>('POST', '/api/v1/campaigns', {
      body: {
        name: '  Spring Appeal 2026 ',
        code: 'SPRING26',
        parent_id: parent.id,
        starts_on: '2026-03-01',
        ends_on: '2026-05-31',
        goal: 250000.5,
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'campaign',
      name: 'Spring Appeal 2026',
      code: 'SPRING26',
      parent_id: parent.id,
      starts_on: '2026-03-01',
      ends_on: '2026-05-31',
      goal: 250000.5,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const { id } = response.body;
    expect(response.headers.get('Location')).toBe(`/api/v1/campaigns/${id}`);
    const read = await service.call<Campaign>('GET', `/api/v1/campaigns/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    expect(await storedRow(id)).toEqual({
      name: 'Spring Appeal 2026',
      code: 'SPRING26',
      parent_id: parent.id,
      starts_on: '2026-03-01',
      ends_on: '2026-05-31',
      goal: '250000.50',
      status: 'active',
    });
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['campaign.created']);
    expect(events[0]!.data.object).toEqual(response.body);
  });

  test('only name and code are required: the rest default to null and active', async () => {
    const campaign = await createCampaign();
    expect(campaign).toMatchObject({
      parent_id: null,
      starts_on: null,
      ends_on: null,
      goal: null,
      status: 'active',
    });
  });

  test('a dry run answers the campaign it would create, with id 0, and writes nothing', async () => {
    const before = await campaignRows();
    const response = await service.call<Campaign>('POST', '/api/v1/campaigns?dry_run=true', {
      body: { name: 'Never stored', code: 'NEVER', goal: 10 },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 0, object: 'campaign', code: 'NEVER', goal: 10 });
    expect(response.headers.get('Location')).toBeNull();
    expect(await campaignRows()).toEqual(before);
  });

  test('a retry with the same Idempotency-Key replays the campaign and writes one row and one event', async () => {
    const body = { name: 'Retried', code: 'RETRIED' };
    const headers = { 'Idempotency-Key': 'campaign-once' };
    const first = await service.call<Campaign>('POST', '/api/v1/campaigns', { body, headers });
    const second = await service.call<Campaign>('POST', '/api/v1/campaigns', { body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(
      await service.db.anyFirst(sql.unsafe`SELECT id FROM campaigns WHERE code = 'RETRIED'`),
    ).toEqual([first.body.id]);
    expect(await eventsOf(first.body.id)).toHaveLength(1);
  });

  test('a closed campaign may be a parent (closing a campaign does not close its children)', async () => {
    const closed = await createCampaign({ status: 'closed' });
    const child = await createCampaign({ parent_id: closed.id });
    expect(child).toMatchObject({ parent_id: closed.id, status: 'active' });
  });

  test('code is unique case-insensitively; another institution may use the same code', async () => {
    const theirs = await createCampaign({ code: 'SHARED' }, other.key);
    const mine = await createCampaign({ code: 'shared' });
    expect([theirs.code, mine.code]).toEqual(['SHARED', 'shared']);
  });

  const cases: Array<[string, Record<string, unknown>, Array<{ param: string; code: string }>]> = [
    ['name missing', { code: 'X1' }, [{ param: 'name', code: 'required' }]],
    ['code missing', { name: 'X' }, [{ param: 'code', code: 'required' }]],
    ['code blank', { name: 'X', code: '   ' }, [{ param: 'code', code: 'required' }]],
    [
      'name of 201 characters',
      { name: 'n'.repeat(201), code: 'X2' },
      [{ param: 'name', code: 'too_long' }],
    ],
    [
      'code of 31 characters',
      { name: 'X', code: 'c'.repeat(31) },
      [{ param: 'code', code: 'too_long' }],
    ],
    [
      'code taken, in another letter case',
      { name: 'X', code: 'af26' },
      [{ param: 'code', code: 'already_in_use' }],
    ],
    [
      'ends_on before starts_on',
      { name: 'X', code: 'X3', starts_on: '2026-05-01', ends_on: '2026-04-30' },
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'a date that does not exist',
      { name: 'X', code: 'X4', starts_on: '2026-02-30' },
      [{ param: 'starts_on', code: 'invalid_format' }],
    ],
    [
      'goal negative',
      { name: 'X', code: 'X5', goal: -5 },
      [{ param: 'goal', code: 'out_of_range' }],
    ],
    ['goal 0', { name: 'X', code: 'X6', goal: 0 }, [{ param: 'goal', code: 'out_of_range' }]],
    [
      'goal with 3 decimals',
      { name: 'X', code: 'X7', goal: 1.005 },
      [{ param: 'goal', code: 'invalid_format' }],
    ],
    [
      'goal as a string',
      { name: 'X', code: 'X8', goal: '100' },
      [{ param: 'goal', code: 'invalid_type' }],
    ],
    [
      'an unknown status',
      { name: 'X', code: 'X9', status: 'archived' },
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'a parent that does not exist',
      { name: 'X', code: 'X10', parent_id: 999999999 },
      [{ param: 'parent_id', code: 'reference_not_found' }],
    ],
    [
      'a parent id that is not an integer',
      { name: 'X', code: 'X11', parent_id: 1.5 },
      [{ param: 'parent_id', code: 'invalid_type' }],
    ],
    [
      'a read-only field',
      { name: 'X', code: 'X12', id: 5 },
      [{ param: 'id', code: 'unknown_field' }],
    ],
  ];
  test.each(cases)(
    '%s: 422 from the real call and both dry runs, nothing written',
    async (_name, body, expected) => {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/campaigns',
        'POST',
        body,
        expected,
        campaignRows,
      );
    },
  );

  test('another institution’s campaign as parent is refused exactly as a missing one', async () => {
    const theirs = await createCampaign({}, other.key);
    for (const id of [theirs.id, 999999999])
      await expectSameFailureThreeWays(
        service,
        '/api/v1/campaigns',
        'POST',
        { name: 'X', code: 'FOREIGN', parent_id: id },
        [{ param: 'parent_id', code: 'reference_not_found' }],
        campaignRows,
      );
  });

  test('a tree of 10 levels takes no 11th level', async () => {
    const ids = await chain(10);
    await expectSameFailureThreeWays(
      service,
      '/api/v1/campaigns',
      'POST',
      { name: 'Too deep', code: 'DEEP', parent_id: ids.at(-1) },
      [{ param: 'parent_id', code: 'invalid_value' }],
      campaignRows,
    );
    // One level up, it fits.
    expect((await createCampaign({ parent_id: ids.at(-2) })).parent_id).toBe(ids.at(-2));
  });
});

describe('PATCH /campaigns/{id}', () => {
  test('an update changes the fields sent, clears goal with null, and makes one campaign.updated', async () => {
    const campaign = await createCampaign({ goal: 5000, starts_on: '2026-01-01' });
    const parent = await createCampaign();
    const response = await patch(campaign.id, {
      name: 'Renamed',
      goal: null,
      parent_id: parent.id,
      status: 'closed',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: campaign.id,
      name: 'Renamed',
      goal: null,
      parent_id: parent.id,
      starts_on: '2026-01-01',
      status: 'closed',
    });
    expect(await storedRow(campaign.id)).toMatchObject({
      name: 'Renamed',
      goal: null,
      parent_id: parent.id,
      status: 'closed',
    });
    const events = await eventsOf(campaign.id);
    expect(events.map((event) => event.type)).toEqual(['campaign.updated', 'campaign.created']);
    expect(events[0]!.data.previous_attributes).toMatchObject({ name: campaign.name, goal: 5000 });
  });

  test('a PATCH back to the top (parent_id null) is allowed', async () => {
    const [top, child] = await chain(2);
    const response = await patch(child!, { parent_id: null });
    expect(response.status).toBe(200);
    expect(response.body.parent_id).toBeNull();
    expect((await storedRow(child!)).parent_id).toBeNull();
    expect((await storedRow(top!)).parent_id).toBeNull();
  });

  test('ends_on is judged against the stored starts_on', async () => {
    const campaign = await createCampaign({ starts_on: '2026-06-01' });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/campaigns/${campaign.id}`,
      'PATCH',
      { ends_on: '2026-05-31' },
      [{ param: 'ends_on', code: 'out_of_range' }],
      campaignRows,
    );
  });

  test('a campaign cannot be its own parent', async () => {
    const campaign = await createCampaign();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/campaigns/${campaign.id}`,
      'PATCH',
      { parent_id: campaign.id },
      [{ param: 'parent_id', code: 'invalid_value' }],
      campaignRows,
    );
  });

  test('a campaign cannot move under its child, nor under a descendant four levels down', async () => {
    const ids = await chain(5);
    for (const below of [ids[1]!, ids[4]!])
      await expectSameFailureThreeWays(
        service,
        `/api/v1/campaigns/${ids[0]}`,
        'PATCH',
        { parent_id: below },
        [{ param: 'parent_id', code: 'invalid_value' }],
        campaignRows,
      );
    // A middle campaign cannot move under the bottom one either.
    await expectSameFailureThreeWays(
      service,
      `/api/v1/campaigns/${ids[2]}`,
      'PATCH',
      { parent_id: ids[4] },
      [{ param: 'parent_id', code: 'invalid_value' }],
      campaignRows,
    );
  });

  test('a move that would make the tree deeper than 10 levels counts the subtree that moves', async () => {
    const host = await chain(7);
    const branch = await chain(3);
    // 7 levels above plus the 3 of the branch: 10, which fits; one more level does not.
    expect((await patch(branch[0]!, { parent_id: host.at(-1) })).status).toBe(200);
    const deeper = await chain(4);
    await expectSameFailureThreeWays(
      service,
      `/api/v1/campaigns/${deeper[0]}`,
      'PATCH',
      { parent_id: host.at(-1) },
      [{ param: 'parent_id', code: 'invalid_value' }],
      campaignRows,
    );
  });

  test('the code may keep its own value in another letter case', async () => {
    const campaign = await createCampaign({ code: 'KEEPME' });
    const response = await patch(campaign.id, { code: 'keepme' });
    expect(response.status).toBe(200);
    expect((await storedRow(campaign.id)).code).toBe('keepme');
  });

  test('another institution’s campaign is as absent as a missing one, for GET, PATCH and DELETE', async () => {
    const theirs = await createCampaign({}, other.key);
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Mine now' }], ['DELETE']] as const) {
      const foreign = await service.call(method, `/api/v1/campaigns/${theirs.id}`, { body });
      const missing = await service.call(method, `/api/v1/campaigns/999999999`, { body });
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect((foreign.body as { error: { message: string } }).error.message).toBe(
        (missing.body as { error: { message: string } }).error.message,
      );
    }
    expect(await storedRow(theirs.id)).toMatchObject({ name: theirs.name });
  });

  test('another institution’s campaign as parent in a PATCH is reference_not_found', async () => {
    const theirs = await createCampaign({}, other.key);
    const mine = await createCampaign();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/campaigns/${mine.id}`,
      'PATCH',
      { parent_id: theirs.id },
      [{ param: 'parent_id', code: 'reference_not_found' }],
      campaignRows,
    );
  });

  // X has child x1 and Y has child y1. Moving X under y1 and Y under x1 would each be fine alone
  // and together make the cycle X → y1 → Y → x1 → X; the rows each move locks do not overlap.
  // The first move is held just before its commit: the second must wait for it and then see it.
  test('two moves that together would make a cycle: the second waits for the first and is refused', async () => {
    const [x, x1] = await chain(2);
    const [y, y1] = await chain(2);
    const {
      early,
      first: one,
      second: two,
    } = await secondWaitsForFirst(service.db, service.tenant.institutionId, {
      key: `move-${++counter}`,
      first: (key) => patch(x!, { parent_id: y1 }, { 'Idempotency-Key': key }),
      second: () => patch(y!, { parent_id: x1 }),
      waits: lockWaits,
    });
    expect({ early, first: one.status, second: two.status }).toEqual({
      early: undefined,
      first: 200,
      second: 422,
    });
    expect(two.body).toMatchObject({
      error: { code: 'validation_failed', errors: [{ param: 'parent_id', code: 'invalid_value' }] },
    });
    expect((await storedRow(x!)).parent_id).toBe(y1);
    expect((await storedRow(y!)).parent_id).toBeNull();
  });

  test('the same two moves sent at once, many times: never both', async () => {
    for (let round = 0; round < 6; round++) {
      const [x, x1] = await chain(2);
      const [y, y1] = await chain(2);
      const [one, two] = await Promise.all([
        patch(x!, { parent_id: y1 }),
        patch(y!, { parent_id: x1 }),
      ]);
      expect([one.status, two.status].sort()).toEqual([200, 422]);
    }
  });
});

describe('DELETE /campaigns/{id}', () => {
  test('deletes a campaign: 200, GET 404, the row gone, one campaign.deleted', async () => {
    const campaign = await createCampaign();
    const dry = await service.call('DELETE', `/api/v1/campaigns/${campaign.id}?dry_run=true`);
    expect(dry.status).toBe(200);
    expect(await storedRow(campaign.id)).toMatchObject({ code: campaign.code });
    const response = await service.call('DELETE', `/api/v1/campaigns/${campaign.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: campaign.id, object: 'campaign', deleted: true });
    expect((await service.call('GET', `/api/v1/campaigns/${campaign.id}`)).status).toBe(404);
    expect(
      await service.db.maybeOne(sql.unsafe`SELECT id FROM campaigns WHERE id = ${campaign.id}`),
    ).toBeNull();
    expect((await eventsOf(campaign.id)).map((event) => event.type)).toEqual([
      'campaign.deleted',
      'campaign.created',
    ]);
  });

  test('a campaign with child campaigns or appeals is 409 resource_in_use, saying which', async () => {
    const [parent] = await chain(3);
    const withAppeal = await createCampaign();
    await created(
      service.call('POST', '/api/v1/appeals', {
        body: {
          name: 'Letter',
          code: `L-${++counter}`,
          channel: 'mail',
          campaign_id: withAppeal.id,
        },
      }),
    );
    const before = await campaignRows();
    for (const [id, words] of [
      [parent!, '1 child campaign'],
      [withAppeal.id, '1 appeal'],
    ] as const) {
      const response = await service.call('DELETE', `/api/v1/campaigns/${id}`);
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({
        error: { type: 'invalid_request_error', code: 'resource_in_use' },
      });
      expect((response.body as { error: { message: string } }).error.message).toContain(words);
      const dry = await service.call('DELETE', `/api/v1/campaigns/${id}?dry_run=true`);
      expect(dry.status).toBe(409);
    }
    expect(await campaignRows()).toEqual(before);
  });
});

describe('GET /campaigns', () => {
  test('lists newest first, pages with the filters pinned, and filters by status, parent_id and q', async () => {
    const parent = await createCampaign({ name: 'Capital Campaign', code: 'CAPITAL' });
    const children = [
      await createCampaign({ parent_id: parent.id, name: 'Library wing' }),
      await createCampaign({ parent_id: parent.id, status: 'closed' }),
      await createCampaign({ parent_id: parent.id }),
    ];
    const under = await service.call<Page<Campaign>>(
      'GET',
      `/api/v1/campaigns?parent_id=${parent.id}&limit=2`,
    );
    expect(under.status).toBe(200);
    expect(under.body.data.map((c) => c.id)).toEqual([children[2]!.id, children[1]!.id]);
    expect(under.body.has_more).toBe(true);
    const rest = await service.call<Page<Campaign>>(
      'GET',
      `/api/v1/campaigns?limit=2&starting_after=${encodeURIComponent(under.body.next_cursor!)}`,
    );
    expect(rest.body.data.map((c) => c.id)).toEqual([children[0]!.id]);
    expect(rest.body.has_more).toBe(false);

    const closed = await service.call<Page<Campaign>>(
      'GET',
      `/api/v1/campaigns?parent_id=${parent.id}&status=closed`,
    );
    expect(closed.body.data.map((c) => c.id)).toEqual([children[1]!.id]);
    const byName = await service.call<Page<Campaign>>('GET', '/api/v1/campaigns?q=library');
    expect(byName.body.data.map((c) => c.id)).toEqual([children[0]!.id]);
    const byCode = await service.call<Page<Campaign>>('GET', '/api/v1/campaigns?q=capital');
    expect(byCode.body.data.map((c) => c.id)).toEqual([parent.id]);
    expect(byCode.body.data[0]).toEqual(parent);
  });

  test('lists only the caller’s campaigns; another institution’s parent filters to an empty page', async () => {
    const theirs = await createCampaign({}, other.key);
    await createCampaign({ parent_id: theirs.id }, other.key);
    const page = await service.call<Page<Campaign>>(
      'GET',
      `/api/v1/campaigns?parent_id=${theirs.id}`,
    );
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([]);
    const all = await service.call<Page<Campaign>>('GET', '/api/v1/campaigns?limit=100');
    expect(all.body.data.map((c) => c.id)).not.toContain(theirs.id);
  });

  test('a bad filter is 400 invalid_parameter', async () => {
    for (const query of ['status=open', 'parent_id=abc'])
      expect((await service.call('GET', `/api/v1/campaigns?${query}`)).status).toBe(400);
  });

  test('a PATCH of a missing campaign is 404 before its body is judged', async () => {
    await expectSameErrorThreeWays(
      service,
      '/api/v1/campaigns/999999999',
      'PATCH',
      { parent_id: 999999998 },
      { status: 404, code: 'resource_not_found' },
      campaignRows,
    );
  });
});
