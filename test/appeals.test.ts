// Appeals (fundraising.md §3): the resource, its campaign and its filters.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';

interface Appeal {
  id: number;
  object: string;
  name: string;
  code: string;
  campaign_id: number | null;
  channel: string;
  starts_on: string | null;
  ends_on: string | null;
  cost: number | null;
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
let campaignId: number;

const createCampaign = (body: Record<string, unknown> = {}, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/campaigns', {
      key,
      body: { name: `Campaign ${++counter}`, code: `C-${counter}`, ...body },
    }),
  );

const createAppeal = (body: Record<string, unknown> = {}, key?: string) =>
  created<Appeal>(
    service.call('POST', '/api/v1/appeals', {
      key,
      body: { name: `Appeal ${++counter}`, code: `A-${counter}`, channel: 'mail', ...body },
    }),
  );

const appealRows = () =>
  service.db.any(sql.unsafe`
    SELECT id, institution_id, name, code, campaign_id, channel, starts_on::text, ends_on::text,
           cost::text, status
    FROM appeals ORDER BY id`);

const storedRow = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT name, code, campaign_id, channel, starts_on::text, ends_on::text, cost::text, status
    FROM appeals WHERE id = ${id}`);

const eventsOf = async (id: number) => {
  const page = await service.call<{ data: Event[] }>(
    'GET',
    `/api/v1/events?object_type=appeal&object_id=${id}`,
  );
  expect(page.status).toBe(200);
  return page.body.data;
};

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  campaignId = (await createCampaign({ name: 'Annual Fund 2026', code: 'AF26' })).id;
  await createAppeal({ code: 'SPRING-MAIL' });
});

afterAll(async () => {
  await service?.close();
});

describe('POST /appeals', () => {
  test('creates an appeal: 201 with Location, GET answers the same, one event, the row stored', async () => {
    const response = await service.call<Appeal>('POST', '/api/v1/appeals', {
      body: {
        name: ' Spring letter 2026 ',
        code: 'SPRING26-LETTER',
        campaign_id: campaignId,
        channel: 'mail',
        starts_on: '2026-03-01',
        ends_on: '2026-03-31',
        cost: 1250.5,
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'appeal',
      name: 'Spring letter 2026',
      code: 'SPRING26-LETTER',
      campaign_id: campaignId,
      channel: 'mail',
      starts_on: '2026-03-01',
      ends_on: '2026-03-31',
      cost: 1250.5,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const { id } = response.body;
    expect(response.headers.get('Location')).toBe(`/api/v1/appeals/${id}`);
    const read = await service.call<Appeal>('GET', `/api/v1/appeals/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    expect(await storedRow(id)).toEqual({
      name: 'Spring letter 2026',
      code: 'SPRING26-LETTER',
      campaign_id: campaignId,
      channel: 'mail',
      starts_on: '2026-03-01',
      ends_on: '2026-03-31',
      cost: '1250.50',
      status: 'active',
    });
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['appeal.created']);
    expect(events[0]!.data.object).toEqual(response.body);
  });

  test('name, code and channel are required; the rest default to null and active; cost may be 0', async () => {
    const appeal = await createAppeal({ channel: 'email', cost: 0 });
    expect(appeal).toMatchObject({
      campaign_id: null,
      channel: 'email',
      starts_on: null,
      ends_on: null,
      cost: 0,
      status: 'active',
    });
  });

  test('a dry run answers the appeal it would create, with id 0, and writes nothing', async () => {
    const before = await appealRows();
    const response = await service.call<Appeal>('POST', '/api/v1/appeals?dry_run=true', {
      body: { name: 'Never stored', code: 'NEVER', channel: 'web', campaign_id: campaignId },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 0, object: 'appeal', campaign_id: campaignId });
    expect(response.headers.get('Location')).toBeNull();
    expect(await appealRows()).toEqual(before);
  });

  test('a retry with the same Idempotency-Key replays the appeal and writes one row and one event', async () => {
    const body = { name: 'Retried', code: 'RETRIED', channel: 'phone' };
    const headers = { 'Idempotency-Key': 'appeal-once' };
    const first = await service.call<Appeal>('POST', '/api/v1/appeals', { body, headers });
    const second = await service.call<Appeal>('POST', '/api/v1/appeals', { body, headers });
    expect(first.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(
      await service.db.anyFirst(sql.unsafe`SELECT id FROM appeals WHERE code = 'RETRIED'`),
    ).toEqual([first.body.id]);
    expect(await eventsOf(first.body.id)).toHaveLength(1);
  });

  test('an appeal may share its code with a campaign, and with another institution’s appeal', async () => {
    const theirs = await createAppeal({ code: 'SHARED' }, other.key);
    const mine = await createAppeal({ code: 'af26' });
    expect([theirs.code, mine.code]).toEqual(['SHARED', 'af26']);
  });

  const cases: Array<[string, Record<string, unknown>, Array<{ param: string; code: string }>]> = [
    ['name missing', { code: 'X1', channel: 'mail' }, [{ param: 'name', code: 'required' }]],
    ['code missing', { name: 'X', channel: 'mail' }, [{ param: 'code', code: 'required' }]],
    ['channel missing', { name: 'X', code: 'X2' }, [{ param: 'channel', code: 'required' }]],
    [
      'an unknown channel',
      { name: 'X', code: 'X3', channel: 'fax' },
      [{ param: 'channel', code: 'invalid_value' }],
    ],
    [
      'name of 201 characters',
      { name: 'n'.repeat(201), code: 'X4', channel: 'mail' },
      [{ param: 'name', code: 'too_long' }],
    ],
    [
      'code of 31 characters',
      { name: 'X', code: 'c'.repeat(31), channel: 'mail' },
      [{ param: 'code', code: 'too_long' }],
    ],
    [
      'code taken, in another letter case',
      { name: 'X', code: 'spring-mail', channel: 'mail' },
      [{ param: 'code', code: 'already_in_use' }],
    ],
    [
      'ends_on before starts_on',
      { name: 'X', code: 'X5', channel: 'mail', starts_on: '2026-05-01', ends_on: '2026-04-30' },
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'cost negative',
      { name: 'X', code: 'X6', channel: 'mail', cost: -1 },
      [{ param: 'cost', code: 'out_of_range' }],
    ],
    [
      'cost with 3 decimals',
      { name: 'X', code: 'X7', channel: 'mail', cost: 0.001 },
      [{ param: 'cost', code: 'invalid_format' }],
    ],
    [
      'a campaign that does not exist',
      { name: 'X', code: 'X8', channel: 'mail', campaign_id: 999999999 },
      [{ param: 'campaign_id', code: 'reference_not_found' }],
    ],
    [
      'an unknown status',
      { name: 'X', code: 'X9', channel: 'mail', status: 'paused' },
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'every problem at once',
      { code: 'spring-mail', channel: 'fax', cost: -1 },
      [
        { param: 'name', code: 'required' },
        { param: 'code', code: 'already_in_use' },
        { param: 'channel', code: 'invalid_value' },
        { param: 'cost', code: 'out_of_range' },
      ],
    ],
  ];
  test.each(cases)(
    '%s: 422 from the real call and both dry runs, nothing written',
    async (_name, body, expected) => {
      await expectSameFailureThreeWays(
        service,
        '/api/v1/appeals',
        'POST',
        body,
        expected,
        appealRows,
      );
    },
  );

  test('another institution’s campaign is refused exactly as a missing one', async () => {
    const theirs = await createCampaign({}, other.key);
    for (const id of [theirs.id, 999999999])
      await expectSameFailureThreeWays(
        service,
        '/api/v1/appeals',
        'POST',
        { name: 'X', code: 'FOREIGN', channel: 'mail', campaign_id: id },
        [{ param: 'campaign_id', code: 'reference_not_found' }],
        appealRows,
      );
  });

  test('a closed campaign takes no new appeal (reference_inactive)', async () => {
    const closed = await createCampaign({ status: 'closed' });
    await expectSameFailureThreeWays(
      service,
      '/api/v1/appeals',
      'POST',
      { name: 'X', code: 'LATE', channel: 'mail', campaign_id: closed.id },
      [{ param: 'campaign_id', code: 'reference_inactive' }],
      appealRows,
    );
  });
});

describe('PATCH and DELETE /appeals/{id}', () => {
  test('an update changes the fields sent, clears the campaign with null, and makes one appeal.updated', async () => {
    const appeal = await createAppeal({ campaign_id: campaignId, cost: 10 });
    const response = await service.call<Appeal>('PATCH', `/api/v1/appeals/${appeal.id}`, {
      body: { campaign_id: null, channel: 'event', cost: 99.99, status: 'closed' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: appeal.id,
      campaign_id: null,
      channel: 'event',
      cost: 99.99,
      status: 'closed',
    });
    expect(await storedRow(appeal.id)).toMatchObject({
      campaign_id: null,
      channel: 'event',
      cost: '99.99',
      status: 'closed',
    });
    const events = await eventsOf(appeal.id);
    expect(events.map((event) => event.type)).toEqual(['appeal.updated', 'appeal.created']);
    expect(events[0]!.data.previous_attributes).toMatchObject({
      campaign_id: campaignId,
      cost: 10,
    });
  });

  test('an appeal keeps its campaign after the campaign closes, and may still be changed', async () => {
    const campaign = await createCampaign();
    const appeal = await createAppeal({ campaign_id: campaign.id });
    expect(
      (
        await service.call('PATCH', `/api/v1/campaigns/${campaign.id}`, {
          body: { status: 'closed' },
        })
      ).status,
    ).toBe(200);
    const response = await service.call<Appeal>('PATCH', `/api/v1/appeals/${appeal.id}`, {
      body: { name: 'Still here', campaign_id: campaign.id },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'Still here', campaign_id: campaign.id });
    // Moving it to another closed campaign is refused.
    const closed = await createCampaign({ status: 'closed' });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/appeals/${appeal.id}`,
      'PATCH',
      { campaign_id: closed.id },
      [{ param: 'campaign_id', code: 'reference_inactive' }],
      appealRows,
    );
  });

  test('ends_on is judged against the stored starts_on', async () => {
    const appeal = await createAppeal({ starts_on: '2026-06-01' });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/appeals/${appeal.id}`,
      'PATCH',
      { ends_on: '2026-05-31' },
      [{ param: 'ends_on', code: 'out_of_range' }],
      appealRows,
    );
  });

  test('another institution’s appeal is as absent as a missing one, for GET, PATCH and DELETE', async () => {
    const theirs = await createAppeal({}, other.key);
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Mine now' }], ['DELETE']] as const) {
      const foreign = await service.call(method, `/api/v1/appeals/${theirs.id}`, { body });
      const missing = await service.call(method, `/api/v1/appeals/999999999`, { body });
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect((foreign.body as { error: { message: string } }).error.message).toBe(
        (missing.body as { error: { message: string } }).error.message,
      );
    }
    expect(await storedRow(theirs.id)).toMatchObject({ name: theirs.name });
  });

  test('another institution’s campaign in a PATCH is reference_not_found', async () => {
    const theirs = await createCampaign({}, other.key);
    const appeal = await createAppeal();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/appeals/${appeal.id}`,
      'PATCH',
      { campaign_id: theirs.id },
      [{ param: 'campaign_id', code: 'reference_not_found' }],
      appealRows,
    );
  });

  test('deletes an appeal: 200, the row gone, its campaign stays, one appeal.deleted', async () => {
    const campaign = await createCampaign();
    const appeal = await createAppeal({ campaign_id: campaign.id });
    const dry = await service.call('DELETE', `/api/v1/appeals/${appeal.id}?dry_run=true`);
    expect(dry.status).toBe(200);
    expect(await storedRow(appeal.id)).toMatchObject({ code: appeal.code });
    const response = await service.call('DELETE', `/api/v1/appeals/${appeal.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: appeal.id, object: 'appeal', deleted: true });
    expect((await service.call('GET', `/api/v1/appeals/${appeal.id}`)).status).toBe(404);
    expect(
      await service.db.maybeOne(sql.unsafe`SELECT id FROM appeals WHERE id = ${appeal.id}`),
    ).toBeNull();
    expect((await eventsOf(appeal.id)).map((event) => event.type)).toEqual([
      'appeal.deleted',
      'appeal.created',
    ]);
    // With its only appeal gone, the campaign can go too.
    expect((await service.call('DELETE', `/api/v1/campaigns/${campaign.id}`)).status).toBe(200);
  });
});

describe('GET /appeals', () => {
  test('filters by campaign_id, status and channel, and pages with the filters pinned', async () => {
    const campaign = await createCampaign();
    const appeals = [
      await createAppeal({ campaign_id: campaign.id, channel: 'email', name: 'Giving Tuesday' }),
      await createAppeal({ campaign_id: campaign.id, channel: 'mail' }),
      await createAppeal({ campaign_id: campaign.id, channel: 'email', status: 'closed' }),
      await createAppeal({ channel: 'email' }),
    ];
    const first = await service.call<Page<Appeal>>(
      'GET',
      `/api/v1/appeals?campaign_id=${campaign.id}&limit=2`,
    );
    expect(first.status).toBe(200);
    expect(first.body.data.map((a) => a.id)).toEqual([appeals[2]!.id, appeals[1]!.id]);
    expect(first.body.has_more).toBe(true);
    const rest = await service.call<Page<Appeal>>(
      'GET',
      `/api/v1/appeals?limit=2&starting_after=${encodeURIComponent(first.body.next_cursor!)}`,
    );
    expect(rest.body.data.map((a) => a.id)).toEqual([appeals[0]!.id]);
    expect(rest.body.has_more).toBe(false);
    expect(rest.body.data[0]).toEqual(appeals[0]);

    const email = await service.call<Page<Appeal>>(
      'GET',
      `/api/v1/appeals?campaign_id=${campaign.id}&channel=email&status=active`,
    );
    expect(email.body.data.map((a) => a.id)).toEqual([appeals[0]!.id]);
    const byName = await service.call<Page<Appeal>>('GET', '/api/v1/appeals?q=giving%20tues');
    expect(byName.body.data.map((a) => a.id)).toEqual([appeals[0]!.id]);
  });

  test('lists only the caller’s appeals; another institution’s campaign filters to an empty page', async () => {
    const theirs = await createCampaign({}, other.key);
    const theirAppeal = await createAppeal({ campaign_id: theirs.id }, other.key);
    const page = await service.call<Page<Appeal>>(
      'GET',
      `/api/v1/appeals?campaign_id=${theirs.id}`,
    );
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([]);
    const all = await service.call<Page<Appeal>>('GET', '/api/v1/appeals?limit=100');
    expect(all.body.data.map((a) => a.id)).not.toContain(theirAppeal.id);
  });

  test('a bad filter is 400 invalid_parameter', async () => {
    for (const query of ['channel=fax', 'status=open', 'campaign_id=0'])
      expect((await service.call('GET', `/api/v1/appeals?${query}`)).status).toBe(400);
  });
});
