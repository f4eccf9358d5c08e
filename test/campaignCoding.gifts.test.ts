// Campaign and appeal codes on gifts, pledges and recurring gifts (fundraising.md §3): as sent
// and answered, inherited by payments, judged, filtered on, and holding their codes in use.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';
import { waitFor } from './helpers/wait.js';

interface Coded {
  id: number;
  campaign_id: number | null;
  appeal_id: number | null;
  designations: {
    fund_id: number;
    amount: number;
    campaign_id: number | null;
    appeal_id: number | null;
  }[];
}

interface Page {
  data: { id: number }[];
  has_more: boolean;
  next_cursor: string | null;
}

let service: TestService;
let other: Tenant;
let counter = 0;
const ids = { donor: 0, fundA: 0, fundB: 0, otherCampaign: 0, otherAppeal: 0 };

const create = <T = { id: number }>(path: string, body: Record<string, unknown>, key?: string) =>
  created<T>(service.call('POST', `/api/v1/${path}`, { key, body }));
const campaign = async (body: Record<string, unknown> = {}, key?: string) =>
  (await create('campaigns', { name: `C ${++counter}`, code: `C-${counter}`, ...body }, key)).id;
const appeal = async (body: Record<string, unknown> = {}, key?: string) =>
  (
    await create(
      'appeals',
      { name: `A ${++counter}`, code: `A-${counter}`, channel: 'mail', ...body },
      key,
    )
  ).id;

const giftBody = (overrides: Record<string, unknown> = {}) => ({
  donor_id: ids.donor,
  amount: 100,
  subject: 'Spring',
  gift_date: '2026-03-15',
  ...overrides,
});
const gift = (overrides: Record<string, unknown> = {}) =>
  create<Coded>('gifts', giftBody(overrides));

const storedGift = async (id: number) =>
  (await service.db.one(sql.unsafe`
    SELECT campaign_id, appeal_id, campaign_ids, appeal_ids, designations FROM gifts WHERE id = ${id}`)) as Record<
    string,
    unknown
  >;
const giftLines = (id: number) =>
  service.db.any(sql.unsafe`
    SELECT line, fund_id, campaign_id, appeal_id, base_net::text, counted
    FROM gift_lines WHERE gift_id = ${id} ORDER BY line`);
const giftRows = () =>
  service.db.any(
    sql.unsafe`SELECT id, campaign_id, appeal_id, designations FROM gifts ORDER BY id`,
  );

const lockWaits = async () =>
  Number(
    await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`),
  );

const listIds = async (query: string) => {
  const response = await service.call<Page>('GET', `/api/v1/gifts?${query}`);
  expect(response.status).toBe(200);
  return response.body.data.map((row) => row.id);
};

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  ids.donor = (
    await create('donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'L',
      email: 'a@x.org',
    })
  ).id;
  ids.fundA = (await create('funds', { name: 'A', code: 'FA' })).id;
  ids.fundB = (await create('funds', { name: 'B', code: 'FB' })).id;
  ids.otherCampaign = await campaign({}, other.key);
  ids.otherAppeal = await appeal({}, other.key);
});

afterAll(async () => {
  await service?.close();
});

describe('codes on a gift', () => {
  test('record and designation codes are stored as sent and answered; lines take the effective codes', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const mail = await appeal({ campaign_id: spring });
    const web = await appeal({ campaign_id: fall });
    const response = await service.call<Coded>('POST', '/api/v1/gifts', {
      body: giftBody({
        campaign_id: spring,
        appeal_id: mail,
        designations: [
          { fund_id: ids.fundA, amount: 60 },
          { fund_id: ids.fundB, amount: 40, campaign_id: fall, appeal_id: web },
        ],
      }),
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      campaign_id: spring,
      appeal_id: mail,
      designations: [
        { fund_id: ids.fundA, amount: 60, campaign_id: null, appeal_id: null },
        { fund_id: ids.fundB, amount: 40, campaign_id: fall, appeal_id: web },
      ],
    });
    const id = response.body.id;
    const row = await storedGift(id);
    expect(row).toMatchObject({
      campaign_id: spring,
      appeal_id: mail,
      campaign_ids: [spring, fall].sort((a, b) => a - b),
      appeal_ids: [mail, web].sort((a, b) => a - b),
    });
    // Only a part's own codes are kept in its jsonb.
    expect((row.designations as Record<string, unknown>[])[0]).not.toHaveProperty('campaign_id');
    expect((row.designations as Record<string, unknown>[])[1]).toMatchObject({
      campaign_id: fall,
      appeal_id: web,
    });
    expect(await giftLines(id)).toEqual([
      {
        line: 1,
        fund_id: ids.fundA,
        campaign_id: spring,
        appeal_id: mail,
        base_net: '60.00',
        counted: true,
      },
      {
        line: 2,
        fund_id: ids.fundB,
        campaign_id: fall,
        appeal_id: web,
        base_net: '40.00',
        counted: true,
      },
    ]);
    expect((await service.call('GET', `/api/v1/gifts/${id}`)).body).toEqual(response.body);
  });

  test('a line coded only to an appeal counts toward the appeal’s campaign', async () => {
    const parent = await campaign();
    const mail = await appeal({ campaign_id: parent });
    const { id } = await gift({ appeal_id: mail });
    expect(await storedGift(id)).toMatchObject({
      campaign_id: null,
      appeal_id: mail,
      campaign_ids: [parent],
      appeal_ids: [mail],
    });
    expect(await giftLines(id)).toEqual([
      {
        line: 1,
        fund_id: null,
        campaign_id: parent,
        appeal_id: mail,
        base_net: '100.00',
        counted: true,
      },
    ]);
    expect(await listIds(`campaign_id=${parent}`)).toEqual([id]);
  });

  test('a designation that carries a code is coded by its own pair, not the gift’s', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const web = await appeal({ campaign_id: fall });
    const { id } = await gift({
      campaign_id: spring,
      designations: [
        { fund_id: ids.fundA, amount: 30 },
        { fund_id: ids.fundB, amount: 70, appeal_id: web },
      ],
    });
    expect(await storedGift(id)).toMatchObject({
      campaign_ids: [spring, fall].sort((a, b) => a - b),
      appeal_ids: [web],
    });
    expect(await giftLines(id)).toEqual([
      {
        line: 1,
        fund_id: ids.fundA,
        campaign_id: spring,
        appeal_id: null,
        base_net: '30.00',
        counted: true,
      },
      {
        line: 2,
        fund_id: ids.fundB,
        campaign_id: fall,
        appeal_id: web,
        base_net: '70.00',
        counted: true,
      },
    ]);
  });

  test('an uncoded gift has no lines and empty arrays', async () => {
    const { id } = await gift({ fund_id: ids.fundA });
    expect(await storedGift(id)).toMatchObject({ campaign_ids: [], appeal_ids: [] });
    expect(await giftLines(id)).toEqual([]);
  });

  test('a gift deleted by a statement of its own (not a write of the API) takes its lines', async () => {
    const spring = await campaign();
    const { id } = await gift({ campaign_id: spring, fund_id: ids.fundA });
    expect(await giftLines(id)).toHaveLength(1);
    await service.db.query(sql.unsafe`DELETE FROM gifts WHERE id = ${id}`);
    expect(await giftLines(id)).toEqual([]);
  });

  test('a dry run answers the codes and writes nothing', async () => {
    const spring = await campaign();
    const before = await giftRows();
    const response = await service.call<Coded>('POST', '/api/v1/gifts?dry_run=true', {
      body: giftBody({ campaign_id: spring }),
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 0, campaign_id: spring, appeal_id: null });
    expect(await giftRows()).toEqual(before);
  });

  test('codes are not money: they change on a receipted, refunded gift', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const { id } = await gift({ campaign_id: spring, fund_id: ids.fundA });
    await created(service.call('POST', '/api/v1/receipts', { body: { gift_id: id } }));
    await created(
      service.call('POST', `/api/v1/gifts/${id}/refunds`, {
        body: { amount: 10, refund_date: '2026-04-01' },
      }),
    );
    const response = await service.call<Coded>('PATCH', `/api/v1/gifts/${id}`, {
      body: { campaign_id: fall },
    });
    expect(response.status).toBe(200);
    expect(response.body.campaign_id).toBe(fall);
    expect(await storedGift(id)).toMatchObject({ campaign_id: fall, campaign_ids: [fall] });
    expect(await giftLines(id)).toEqual([
      {
        line: 1,
        fund_id: ids.fundA,
        campaign_id: fall,
        appeal_id: null,
        base_net: '90.00',
        counted: true,
      },
    ]);
    // New codes on a designation are not a new split either.
    const recoded = await service.call<Coded>('PATCH', `/api/v1/gifts/${id}`, {
      body: { designations: [{ fund_id: ids.fundA, amount: 100, campaign_id: spring }] },
    });
    expect(recoded.status).toBe(200);
    expect(recoded.body.designations[0]).toMatchObject({
      campaign_id: spring,
      amount_refunded: 10,
    });
    expect(await giftLines(id)).toEqual([
      {
        line: 1,
        fund_id: ids.fundA,
        campaign_id: spring,
        appeal_id: null,
        base_net: '90.00',
        counted: true,
      },
    ]);
  });

  test('a gift keeps a code that closed since; a new closed code is refused', async () => {
    const spring = await campaign();
    const { id } = await gift({ campaign_id: spring });
    await service.call('PATCH', `/api/v1/campaigns/${spring}`, { body: { status: 'closed' } });
    const kept = await service.call('PATCH', `/api/v1/gifts/${id}`, { body: { subject: 'Kept' } });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ campaign_id: spring, subject: 'Kept' });
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      giftBody({ campaign_id: spring }),
      [{ param: 'campaign_id', code: 'reference_inactive' }],
      giftRows,
    );
  });
});

describe('bad codes', () => {
  const cases: [
    string,
    () => Promise<Record<string, unknown>>,
    { param: string; code: string }[],
  ][] = [
    [
      'a campaign that does not exist',
      async () => ({ campaign_id: 999999 }),
      [{ param: 'campaign_id', code: 'reference_not_found' }],
    ],
    [
      'another institution’s campaign',
      async () => ({ campaign_id: ids.otherCampaign }),
      [{ param: 'campaign_id', code: 'reference_not_found' }],
    ],
    [
      'another institution’s appeal',
      async () => ({ appeal_id: ids.otherAppeal }),
      [{ param: 'appeal_id', code: 'reference_not_found' }],
    ],
    [
      'another institution’s campaign on a designation',
      async () => ({
        designations: [
          { fund_id: ids.fundA, amount: 50 },
          { fund_id: ids.fundB, amount: 50, campaign_id: ids.otherCampaign },
        ],
      }),
      [{ param: 'designations.1.campaign_id', code: 'reference_not_found' }],
    ],
    [
      'a closed campaign',
      async () => ({ campaign_id: await campaign({ status: 'closed' }) }),
      [{ param: 'campaign_id', code: 'reference_inactive' }],
    ],
    [
      'a closed appeal',
      async () => ({ appeal_id: await appeal({ status: 'closed' }) }),
      [{ param: 'appeal_id', code: 'reference_inactive' }],
    ],
    [
      'an appeal of another campaign than the gift’s',
      async () => ({
        campaign_id: await campaign(),
        appeal_id: await appeal({ campaign_id: await campaign() }),
      }),
      [{ param: 'appeal_id', code: 'invalid_value' }],
    ],
    [
      'a designation’s appeal of another campaign than the designation’s',
      async () => ({
        designations: [
          { fund_id: ids.fundA, amount: 50 },
          {
            fund_id: ids.fundB,
            amount: 50,
            campaign_id: await campaign(),
            appeal_id: await appeal({ campaign_id: await campaign() }),
          },
        ],
      }),
      [{ param: 'designations.1.appeal_id', code: 'invalid_value' }],
    ],
    [
      'a code that is not an id',
      async () => ({ campaign_id: 'spring' }),
      [{ param: 'campaign_id', code: 'invalid_type' }],
    ],
    [
      'a designation code that is not an id',
      async () => ({ designations: [{ fund_id: ids.fundA, amount: 100, appeal_id: -1 }] }),
      [{ param: 'designations.0.appeal_id', code: 'out_of_range' }],
    ],
  ];

  test.each(cases)(
    '%s is refused the same three ways and writes nothing',
    async (_name, body, expected) => {
      const extra = await body();
      await expectSameFailureThreeWays(
        service,
        '/api/v1/gifts',
        'POST',
        giftBody(extra),
        expected,
        giftRows,
      );
    },
  );

  test('a PATCH to another institution’s campaign is refused and changes nothing', async () => {
    const { id } = await gift({ campaign_id: await campaign() });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/gifts/${id}`,
      'PATCH',
      { campaign_id: ids.otherCampaign },
      [{ param: 'campaign_id', code: 'reference_not_found' }],
      giftRows,
    );
  });
});

describe('pledges, recurring gifts and their payments', () => {
  test('a pledge takes codes; its payment that sends none takes them, per designation too', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const mail = await appeal({ campaign_id: spring });
    const pledge = await service.call<Coded>('POST', '/api/v1/pledges', {
      body: {
        donor_id: ids.donor,
        amount: 100,
        pledge_date: '2026-01-10',
        campaign_id: spring,
        appeal_id: mail,
        designations: [
          { fund_id: ids.fundA, amount: 70 },
          { fund_id: ids.fundB, amount: 30, campaign_id: fall },
        ],
        schedule: { frequency: 'monthly', installments: 2, first_due_on: '2026-01-31' },
      },
    });
    expect(pledge.status).toBe(201);
    expect(pledge.body).toMatchObject({
      campaign_id: spring,
      appeal_id: mail,
      designations: [
        { fund_id: ids.fundA, amount: 70, campaign_id: null, appeal_id: null },
        { fund_id: ids.fundB, amount: 30, campaign_id: fall, appeal_id: null },
      ],
    });
    const payment = await gift({ pledge_id: pledge.body.id, amount: 10 });
    expect(payment).toMatchObject({
      campaign_id: spring,
      appeal_id: mail,
      designations: [
        { fund_id: ids.fundA, amount: 7, campaign_id: null, appeal_id: null },
        { fund_id: ids.fundB, amount: 3, campaign_id: fall, appeal_id: null },
      ],
    });
    // fundB's designation carries a code, so it is coded by its own pair: no appeal.
    expect(await giftLines(payment.id)).toEqual([
      {
        line: 1,
        fund_id: ids.fundA,
        campaign_id: spring,
        appeal_id: mail,
        base_net: '7.00',
        counted: true,
      },
      {
        line: 2,
        fund_id: ids.fundB,
        campaign_id: fall,
        appeal_id: null,
        base_net: '3.00',
        counted: true,
      },
    ]);
    // A payment that sends its own codes keeps them.
    const own = await gift({ pledge_id: pledge.body.id, amount: 10, campaign_id: fall });
    expect(own).toMatchObject({ campaign_id: fall, appeal_id: null });
  });

  test('a recurring gift takes codes; its payments take its record-level codes', async () => {
    const spring = await campaign();
    const recurring = await service.call<Coded>('POST', '/api/v1/recurring-gifts', {
      body: {
        donor_id: ids.donor,
        amount: 25,
        frequency: 'monthly',
        start_on: '2026-03-01',
        campaign_id: spring,
        designations: [{ fund_id: ids.fundA, amount: 25, appeal_id: null }],
      },
    });
    expect(recurring.status).toBe(201);
    expect(recurring.body).toMatchObject({
      campaign_id: spring,
      appeal_id: null,
      designations: [{ fund_id: ids.fundA, amount: 25, campaign_id: null, appeal_id: null }],
    });
    const payment = await gift({ recurring_gift_id: recurring.body.id, amount: 25 });
    expect(payment).toMatchObject({ campaign_id: spring, appeal_id: null });
    expect(await listIds(`campaign_id=${spring}`)).toEqual([payment.id]);
  });

  test('a closed campaign is refused on a pledge and a recurring gift', async () => {
    const closed = await campaign({ status: 'closed' });
    const pledges = await service.call('POST', '/api/v1/pledges', {
      body: {
        donor_id: ids.donor,
        amount: 100,
        pledge_date: '2026-01-10',
        campaign_id: closed,
        schedule: { frequency: 'monthly', installments: 1, first_due_on: '2026-01-31' },
      },
    });
    expect(pledges.status).toBe(422);
    expect(pledges.body).toMatchObject({
      error: { errors: [{ param: 'campaign_id', code: 'reference_inactive' }] },
    });
    const recurring = await service.call('POST', '/api/v1/recurring-gifts', {
      body: {
        donor_id: ids.donor,
        amount: 25,
        frequency: 'monthly',
        start_on: '2026-03-01',
        designations: [{ fund_id: ids.fundA, amount: 25, campaign_id: ids.otherCampaign }],
      },
    });
    expect(recurring.status).toBe(422);
    expect(recurring.body).toMatchObject({
      error: { errors: [{ param: 'designations.0.campaign_id', code: 'reference_not_found' }] },
    });
  });
});

describe('GET /gifts?campaign_id=&appeal_id=', () => {
  test('matches any line’s effective code, exactly (not descendants), in pages', async () => {
    const parent = await campaign();
    const child = await campaign({ parent_id: parent });
    const mail = await appeal({ campaign_id: parent });
    const a = await gift({ campaign_id: parent });
    const b = await gift({
      designations: [
        { fund_id: ids.fundA, amount: 50 },
        { fund_id: ids.fundB, amount: 50, appeal_id: mail },
      ],
    });
    const c = await gift({ campaign_id: child });
    // The gift's own code, overridden on every line, is not a line's.
    const d = await gift({
      campaign_id: parent,
      designations: [{ fund_id: ids.fundA, amount: 100, campaign_id: child }],
    });
    await gift({});
    const page1 = await service.call<Page>('GET', `/api/v1/gifts?campaign_id=${parent}&limit=1`);
    expect(page1.body.data.map((row) => row.id)).toEqual([b.id]);
    expect(page1.body.has_more).toBe(true);
    const page2 = await service.call<Page>(
      'GET',
      `/api/v1/gifts?campaign_id=${parent}&limit=1&starting_after=${page1.body.next_cursor}`,
    );
    expect(page2.body.data.map((row) => row.id)).toEqual([a.id]);
    expect(page2.body.has_more).toBe(false);
    expect(await listIds(`campaign_id=${child}`)).toEqual([d.id, c.id]);
    expect(await listIds(`appeal_id=${mail}`)).toEqual([b.id]);
    expect(await listIds(`appeal_id=${mail}&campaign_id=${child}`)).toEqual([]);
    expect(await listIds(`campaign_id=${ids.otherCampaign}`)).toEqual([]);
  });

  test('a bad id is the list’s 400', async () => {
    const response = await service.call('GET', '/api/v1/gifts?campaign_id=abc');
    expect(response.status).toBe(400);
  });
});

describe('a coded campaign or appeal is in use', () => {
  test('DELETE of a campaign coded on a gift line is 409 until recoded', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const { id } = await gift({
      designations: [{ fund_id: ids.fundA, amount: 100, campaign_id: spring }],
    });
    const refused = await service.call('DELETE', `/api/v1/campaigns/${spring}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'resource_in_use' } });
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM campaigns WHERE id = ${spring}`,
      ),
    ).toBe(1);
    await service.call('PATCH', `/api/v1/gifts/${id}`, {
      body: { designations: [{ fund_id: ids.fundA, amount: 100, campaign_id: fall }] },
    });
    expect((await service.call('DELETE', `/api/v1/campaigns/${spring}`)).status).toBe(200);
  });

  test('DELETE of a campaign or appeal coded on a pledge or a recurring gift is 409', async () => {
    const spring = await campaign();
    const mail = await appeal();
    await create('pledges', {
      donor_id: ids.donor,
      amount: 100,
      pledge_date: '2026-01-10',
      campaign_id: spring,
      schedule: { frequency: 'monthly', installments: 1, first_due_on: '2026-01-31' },
    });
    await create('recurring-gifts', {
      donor_id: ids.donor,
      amount: 25,
      frequency: 'monthly',
      start_on: '2026-03-01',
      designations: [{ fund_id: ids.fundA, amount: 25, appeal_id: mail }],
    });
    expect((await service.call('DELETE', `/api/v1/campaigns/${spring}`)).status).toBe(409);
    expect((await service.call('DELETE', `/api/v1/appeals/${mail}`)).status).toBe(409);
  });

  test('DELETE of an appeal coded on a gift is 409; an unused one goes', async () => {
    const mail = await appeal();
    const unused = await appeal();
    await gift({ appeal_id: mail });
    const refused = await service.call('DELETE', `/api/v1/appeals/${mail}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'resource_in_use' } });
    expect((await service.call('DELETE', `/api/v1/appeals/${unused}`)).status).toBe(200);
  });

  test('a coded appeal keeps its campaign (422 not_allowed); an unused one may move', async () => {
    const spring = await campaign();
    const fall = await campaign();
    const mail = await appeal({ campaign_id: spring });
    const unused = await appeal({ campaign_id: spring });
    await gift({ appeal_id: mail });
    const refused = await service.call('PATCH', `/api/v1/appeals/${mail}`, {
      body: { campaign_id: fall },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: { errors: [{ param: 'campaign_id', code: 'not_allowed' }] },
    });
    const moved = await service.call('PATCH', `/api/v1/appeals/${unused}`, {
      body: { campaign_id: fall },
    });
    expect(moved.status).toBe(200);
  });

  test('a gift coding a campaign being deleted waits for the delete, then finds it gone', async () => {
    const doomed = await campaign();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // What the campaign's DELETE holds: the row FOR UPDATE until it commits.
    const deletion = service.db.transaction(async (db) => {
      await db.query(sql.unsafe`SELECT id FROM campaigns WHERE id = ${doomed} FOR UPDATE`);
      locked();
      await held;
      await db.query(sql.unsafe`DELETE FROM campaigns WHERE id = ${doomed}`);
    });
    await isLocked;
    const before = await giftRows();
    const write = service.call('POST', '/api/v1/gifts', {
      body: giftBody({ designations: [{ fund_id: ids.fundA, amount: 100, campaign_id: doomed }] }),
    });
    await waitFor(async () => (await lockWaits()) === 1, 10_000, 'the gift waiting');
    release();
    await deletion;
    const response = await write;
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      error: { errors: [{ param: 'designations.0.campaign_id', code: 'reference_not_found' }] },
    });
    expect(await giftRows()).toEqual(before);
  });

  test('a campaign’s DELETE waits for a write coding it, then sees it in use', async () => {
    const spring = await campaign();
    const { id } = await gift({});
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // What a gift write coding a line to the campaign holds until it commits (codingOf).
    const coding = service.db.transaction(async (db) => {
      await db.query(sql.unsafe`SELECT id FROM campaigns WHERE id = ${spring} FOR KEY SHARE`);
      await db.query(sql.unsafe`
        UPDATE gifts SET campaign_ids = ARRAY[${spring}::bigint] WHERE id = ${id}`);
      locked();
      await held;
    });
    await isLocked;
    const removal = service.call('DELETE', `/api/v1/campaigns/${spring}`);
    await waitFor(async () => (await lockWaits()) === 1, 10_000, 'the delete waiting');
    release();
    await coding;
    const response = await removal;
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ error: { code: 'resource_in_use' } });
  });
});
