// A campaign's progress and an appeal's results (fundraising.md §3), against a hand computation:
// the campaign tree, refunds, voids, another currency at its base amount, soft credits, pledge
// payments and what open pledges still owe.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';

interface Progress {
  object: string;
  campaign_id: number;
  goal: number | null;
  raised: number;
  pledged_outstanding: number;
  gift_count: number;
  donor_count: number;
  percent_of_goal: number | null;
  by_appeal: { appeal_id: number | null; raised: number }[];
  by_fund: { fund_id: number | null; raised: number }[];
}

let service: TestService;
let other: Tenant;
let counter = 0;
const ids = {
  donor: 0,
  donor2: 0,
  fundA: 0,
  fundB: 0,
  parent: 0,
  childOne: 0,
  childTwo: 0,
  elsewhere: 0,
  appealOne: 0,
  appealTwo: 0,
  voided: 0,
  pledge: 0,
};

const create = async <T = { id: number }>(
  path: string,
  body: Record<string, unknown>,
  key?: string,
) => created<T>(service.call('POST', `/api/v1/${path}`, { key, body }));
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
const gift = (body: Record<string, unknown>) =>
  create('gifts', {
    donor_id: ids.donor,
    subject: 'Campaign gift',
    gift_date: '2026-03-15',
    ...body,
  });

const progress = async (id: number) => {
  const response = await service.call<Progress>('GET', `/api/v1/campaigns/${id}/progress`);
  expect(response.status).toBe(200);
  return response.body;
};
const results = async (id: number) => {
  const response = await service.call('GET', `/api/v1/appeals/${id}/results`);
  expect(response.status).toBe(200);
  return response.body;
};

/** The sum of a list's `raised`, in cents, so that it compares exactly. */
const cents = (rows: { raised: number }[]) =>
  rows.reduce((sum, row) => sum + Math.round(row.raised * 100), 0);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  const donor = (email: string) =>
    create('donors', { role: 'Individual', first_name: 'Ada', last_name: 'L', email });
  ids.donor = (await donor('a@x.org')).id;
  ids.donor2 = (await donor('b@x.org')).id;
  ids.fundA = (await create('funds', { name: 'A', code: 'FA' })).id;
  ids.fundB = (await create('funds', { name: 'B', code: 'FB' })).id;
  await create('exchange-rates', { currency: 'EUR', rate: 1.1, effective_on: '2026-01-01' });

  ids.parent = await campaign({ goal: 1000 });
  ids.childOne = await campaign({ parent_id: ids.parent });
  ids.childTwo = await campaign({ parent_id: ids.parent });
  ids.elsewhere = await campaign();
  ids.appealOne = await appeal({ campaign_id: ids.parent, cost: 12.5 });
  ids.appealTwo = await appeal({ campaign_id: ids.childOne });

  // 60 to fund A at the parent; 40 to fund B through appeal one (so the parent). A soft credit
  // of the whole gift to donor 2 counts nowhere here.
  await gift({
    amount: 100,
    campaign_id: ids.parent,
    designations: [
      { fund_id: ids.fundA, amount: 60 },
      { fund_id: ids.fundB, amount: 40, appeal_id: ids.appealOne },
    ],
    soft_credits: [{ donor_id: ids.donor2, amount: 100, reason: 'household' }],
  });
  // 50, undesignated, through appeal two only: child one.
  await gift({ amount: 50, appeal_id: ids.appealTwo });
  // EUR 100 at 1.1: 110 at base, to fund A, at child two.
  await gift({ amount: 100, currency: 'EUR', campaign_id: ids.childTwo, fund_id: ids.fundA });
  // 30, refunded 10: 20 net.
  const refunded = await gift({ amount: 30, campaign_id: ids.parent });
  await created(
    service.call('POST', `/api/v1/gifts/${refunded.id}/refunds`, {
      body: { amount: 10, refund_date: '2026-04-01' },
    }),
  );
  // 70, voided: nothing.
  ids.voided = (await gift({ amount: 70, campaign_id: ids.parent })).id;
  await service.call('POST', `/api/v1/gifts/${ids.voided}/void`, { body: { reason: 'Twice' } });
  // 25 to a campaign outside the tree.
  await gift({ amount: 25, campaign_id: ids.elsewhere });
  // A pledge of 200 at the parent; its payment of 40 takes the parent and counts as raised.
  ids.pledge = (
    await create('pledges', {
      donor_id: ids.donor,
      amount: 200,
      pledge_date: '2026-01-10',
      campaign_id: ids.parent,
      schedule: { frequency: 'monthly', installments: 2, first_due_on: '2026-01-31' },
    })
  ).id;
  await gift({ amount: 40, pledge_id: ids.pledge });
  // A pledge split between child one (50) and a campaign outside the tree (50).
  await create('pledges', {
    donor_id: ids.donor2,
    amount: 100,
    pledge_date: '2026-01-10',
    designations: [
      { fund_id: ids.fundA, amount: 50, campaign_id: ids.childOne },
      { fund_id: ids.fundB, amount: 50, campaign_id: ids.elsewhere },
    ],
    schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-01-31' },
  });
  // Donor 2 gives 10 through appeal one.
  await gift({ donor_id: ids.donor2, amount: 10, appeal_id: ids.appealOne });
});

afterAll(async () => {
  await service?.close();
});

describe('GET /campaigns/{id}/progress', () => {
  test('sums the tree’s lines at base, net of refunds, without voids or soft credits', async () => {
    // Lines: 60 (A) + 40 (B, appeal one) + 50 (appeal two) + 110 (A) + 20 + 40 (payment) + 10
    // (appeal one) = 330. Outstanding: 200 - 40 = 160, and child one's half of 100 = 50.
    expect(await progress(ids.parent)).toEqual({
      object: 'campaign_progress',
      campaign_id: ids.parent,
      goal: 1000,
      raised: 330,
      pledged_outstanding: 210,
      gift_count: 6,
      donor_count: 2,
      percent_of_goal: 33,
      by_appeal: [
        { appeal_id: ids.appealOne, raised: 50 },
        { appeal_id: ids.appealTwo, raised: 50 },
        { appeal_id: null, raised: 230 },
      ],
      by_fund: [
        { fund_id: ids.fundA, raised: 170 },
        { fund_id: ids.fundB, raised: 40 },
        { fund_id: null, raised: 120 },
      ],
    });
  });

  test('a child campaign counts its own subtree only', async () => {
    expect(await progress(ids.childOne)).toEqual({
      object: 'campaign_progress',
      campaign_id: ids.childOne,
      goal: null,
      raised: 50,
      pledged_outstanding: 50,
      gift_count: 1,
      donor_count: 1,
      percent_of_goal: null,
      by_appeal: [{ appeal_id: ids.appealTwo, raised: 50 }],
      by_fund: [{ fund_id: null, raised: 50 }],
    });
    expect(await progress(ids.childTwo)).toMatchObject({
      raised: 110,
      by_fund: [{ fund_id: ids.fundA, raised: 110 }],
      by_appeal: [{ appeal_id: null, raised: 110 }],
    });
  });

  test('a campaign moved in the tree takes its gifts and donors from one parent to the other', async () => {
    const [from, to] = [await campaign(), await campaign()];
    const moved = await campaign({ parent_id: from });
    await gift({ amount: 40, campaign_id: moved });
    await gift({ donor_id: ids.donor2, amount: 60, campaign_id: moved });
    await gift({ amount: 5, campaign_id: to });
    const figures = async (id: number) => {
      const { raised, gift_count, donor_count } = await progress(id);
      return { raised, gift_count, donor_count };
    };
    expect([await figures(from), await figures(to)]).toEqual([
      { raised: 100, gift_count: 2, donor_count: 2 },
      { raised: 5, gift_count: 1, donor_count: 1 },
    ]);
    const patch = (parent_id: number | null) =>
      service.call('PATCH', `/api/v1/campaigns/${moved}`, { body: { parent_id } });
    expect((await patch(to)).status).toBe(200);
    expect([await figures(from), await figures(to)]).toEqual([
      { raised: 0, gift_count: 0, donor_count: 0 },
      { raised: 105, gift_count: 3, donor_count: 2 },
    ]);
    // To the top of the tree: no parent counts it any more; it counts its own.
    expect((await patch(null)).status).toBe(200);
    expect([await figures(to), await figures(moved)]).toEqual([
      { raised: 5, gift_count: 1, donor_count: 1 },
      { raised: 100, gift_count: 2, donor_count: 2 },
    ]);
  });

  test('by_appeal and by_fund each sum exactly to raised', async () => {
    for (const id of [ids.parent, ids.childOne, ids.childTwo, ids.elsewhere]) {
      const body = await progress(id);
      expect(cents(body.by_appeal)).toBe(Math.round(body.raised * 100));
      expect(cents(body.by_fund)).toBe(Math.round(body.raised * 100));
    }
  });

  test('percent_of_goal is rounded to 2 decimals; a campaign with nothing raised answers zeros', async () => {
    const sevenths = await campaign({ goal: 7 });
    expect(await progress(sevenths)).toEqual({
      object: 'campaign_progress',
      campaign_id: sevenths,
      goal: 7,
      raised: 0,
      pledged_outstanding: 0,
      gift_count: 0,
      donor_count: 0,
      percent_of_goal: 0,
      by_appeal: [],
      by_fund: [],
    });
    await gift({ amount: 1, campaign_id: sevenths });
    expect(await progress(sevenths)).toMatchObject({ raised: 1, percent_of_goal: 14.29 });
    const thirds = await campaign({ goal: 3 });
    await gift({ amount: 2, campaign_id: thirds });
    expect(await progress(thirds)).toMatchObject({ raised: 2, percent_of_goal: 66.67 });
  });

  test('follows refunds, voids, recoding and deletes of its gifts', async () => {
    const tracked = await campaign({ goal: 100 });
    const { id } = await gift({ amount: 80, campaign_id: tracked, fund_id: ids.fundA });
    expect(await progress(tracked)).toMatchObject({ raised: 80, gift_count: 1 });
    await created(
      service.call('POST', `/api/v1/gifts/${id}/refunds`, {
        body: { amount: 30, refund_date: '2026-04-01' },
      }),
    );
    expect(await progress(tracked)).toMatchObject({
      raised: 50,
      by_fund: [{ fund_id: ids.fundA, raised: 50 }],
    });
    await service.call('PATCH', `/api/v1/gifts/${id}`, { body: { campaign_id: ids.elsewhere } });
    expect(await progress(tracked)).toMatchObject({ raised: 0, gift_count: 0 });
    const second = await gift({ amount: 20, campaign_id: tracked });
    expect(await progress(tracked)).toMatchObject({ raised: 20, gift_count: 1 });
    await service.call('POST', `/api/v1/gifts/${second.id}/void`, { body: { reason: 'Error' } });
    expect(await progress(tracked)).toMatchObject({ raised: 0, gift_count: 0 });
    const third = await gift({ amount: 15, campaign_id: tracked });
    expect(await progress(tracked)).toMatchObject({ raised: 15 });
    expect((await service.call('DELETE', `/api/v1/gifts/${third.id}`)).status).toBe(200);
    expect(await progress(tracked)).toMatchObject({ raised: 0 });
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM gift_lines WHERE gift_id = ${third.id}`,
      ),
    ).toBe(0);
  });

  test('another institution’s campaign, or none, is 404', async () => {
    const theirs = await campaign({}, other.key);
    for (const id of [theirs, 999999]) {
      const response = await service.call('GET', `/api/v1/campaigns/${id}/progress`);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ error: { code: 'resource_not_found' } });
    }
    const theirsSeen = await service.call('GET', `/api/v1/campaigns/${theirs}/progress`, {
      key: other.key,
    });
    expect(theirsSeen.body).toMatchObject({ raised: 0, campaign_id: theirs });
  });
});

describe('GET /appeals/{id}/results', () => {
  test('sums the appeal’s lines, and its cost per unit raised', async () => {
    expect(await results(ids.appealOne)).toEqual({
      object: 'appeal_results',
      appeal_id: ids.appealOne,
      raised: 50,
      gift_count: 2,
      donor_count: 2,
      cost: 12.5,
      cost_per_unit_raised: 0.25,
    });
    expect(await results(ids.appealTwo)).toEqual({
      object: 'appeal_results',
      appeal_id: ids.appealTwo,
      raised: 50,
      gift_count: 1,
      donor_count: 1,
      cost: null,
      cost_per_unit_raised: null,
    });
  });

  test('cost per unit raised to 4 decimals, null when nothing was raised', async () => {
    const thirds = await appeal({ cost: 10 });
    expect(await results(thirds)).toMatchObject({ raised: 0, cost_per_unit_raised: null });
    await gift({ amount: 3, appeal_id: thirds });
    expect(await results(thirds)).toMatchObject({ raised: 3, cost_per_unit_raised: 3.3333 });
  });

  test('another institution’s appeal, or none, is 404', async () => {
    const theirs = await appeal({}, other.key);
    for (const id of [theirs, 999999]) {
      const response = await service.call('GET', `/api/v1/appeals/${id}/results`);
      expect(response.status).toBe(404);
    }
  });
});
