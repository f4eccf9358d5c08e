// A new gift coded at the gift (a campaign, an appeal, or both; its designations without codes of
// their own) commits in one statement with its lines and the campaign totals (fundraising.md §3):
// that statement holds the campaigns above the gift's as it read them, judges the codes as the
// full path would, and leaves every total exactly what a recomputation gives.
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';

interface Progress {
  raised: number;
  gift_count: number;
  donor_count: number;
  by_appeal: { appeal_id: number | null; raised: number }[];
  by_fund: { fund_id: number | null; raised: number }[];
}

interface Refusal {
  error: { code: string; errors?: { param: string; code: string }[] };
}

let service: TestService;
let other: Tenant;
let counter = 0;
const donors: number[] = [];
const funds: number[] = [];

const create = async (path: string, body: Record<string, unknown>, key?: string) =>
  (
    await created<{ id: number }>(
      service.call('POST', `/api/v1/${path}`, {
        key,
        body,
        headers: { 'Idempotency-Key': `make-${++counter}` },
      }),
    )
  ).id;
const campaign = (body: Record<string, unknown> = {}, key?: string) =>
  create('campaigns', { name: `C ${++counter}`, code: `C-${counter}`, ...body }, key);
const appeal = (body: Record<string, unknown> = {}) =>
  create('appeals', { name: `A ${++counter}`, code: `A-${counter}`, channel: 'mail', ...body });

const giftBody = (overrides: Record<string, unknown> = {}) => ({
  donor_id: donors[0],
  amount: 100,
  subject: 'Spring',
  gift_date: '2026-03-15',
  ...overrides,
});
const postGift = (overrides: Record<string, unknown> = {}) =>
  service.call<{ id: number } & Refusal>('POST', '/api/v1/gifts', { body: giftBody(overrides) });
const gift = async (overrides: Record<string, unknown> = {}) =>
  (await created(postGift(overrides))).id;

const progress = async (id: number) => {
  const response = await service.call<Progress>('GET', `/api/v1/campaigns/${id}/progress`);
  expect(response.status).toBe(200);
  const { raised, gift_count, donor_count, by_appeal, by_fund } = response.body;
  return { raised, gift_count, donor_count, by_appeal, by_fund };
};

const recomputedRow = z.object({
  raised: z.string(),
  gift_count: z.number(),
  donor_count: z.number(),
});

/** A tree's progress recomputed from its gifts as stored (every gift here is coded at the gift). */
const recomputed = async (tree: readonly number[]) => {
  const row = await service.db.one(sql.type(recomputedRow)`
    SELECT coalesce(sum(base_amount - base_amount_refunded), 0)::text AS raised,
           count(*)::int AS gift_count, count(DISTINCT donor_id)::int AS donor_count
    FROM gifts
    WHERE institution_id = ${service.tenant.institutionId} AND status = 'posted'
      AND campaign_ids && ${sql.array([...tree], 'int8')}`);
  return { raised: Number(row.raised), gift_count: row.gift_count, donor_count: row.donor_count };
};

const giftCount = () => service.count('gifts', service.tenant.institutionId);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  for (const name of ['Ada', 'Grace', 'Edith'])
    donors.push(await create('donors', { role: 'Individual', first_name: name, last_name: 'L' }));
  for (const code of ['F1', 'F2']) funds.push(await create('funds', { name: code, code }));
  await create('exchange-rates', { currency: 'EUR', rate: 1.1, effective_on: '2026-01-01' });
});

afterAll(async () => {
  await service?.close();
});

test('coded gifts sent at once: each answered as stored, one event each, and progress exact', async () => {
  const top = await campaign({ goal: 10_000 });
  const child = await campaign({ parent_id: top });
  const ofChild = await appeal({ campaign_id: child });
  const ofNone = await appeal();
  // The full path reads each appeal's campaign first: later gifts coded only to them need no read.
  await gift({ appeal_id: ofChild });
  await gift({ appeal_id: ofNone });
  const bodies = Array.from({ length: 40 }, (_, n) => {
    const codes = [
      { campaign_id: child, appeal_id: ofChild },
      { appeal_id: ofChild },
      { campaign_id: top },
      { campaign_id: top, appeal_id: ofNone },
    ][n % 4]!;
    return {
      donor_id: donors[n % 3],
      amount: 10 + n,
      ...codes,
      ...(n % 5 === 0 ? { currency: 'EUR' } : {}),
      ...(n % 3 === 0
        ? {
            designations: [
              { fund_id: funds[0], amount: 4 + n },
              { fund_id: funds[1], amount: 6 },
            ],
          }
        : { fund_id: funds[n % 2] }),
    };
  });
  // Uncoded gifts among them: a statement may hold both kinds, the lines written for the coded.
  const uncoded = Array.from({ length: 10 }, (_, n) => gift({ amount: 1 + n }));
  const answers = await Promise.all(
    bodies.map((body) =>
      created<{ id: number; campaign_id: number | null; appeal_id: number | null }>(
        service.call('POST', '/api/v1/gifts', { body: giftBody(body) }),
      ),
    ),
  );
  const plainIds = await Promise.all(uncoded);
  const plainLines = await service.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM gift_lines
    WHERE institution_id = ${service.tenant.institutionId}
      AND gift_id = ANY(${sql.array(plainIds, 'int8')})`);
  expect(plainLines).toBe(0);
  for (const [index, answer] of answers.entries()) {
    const fetched = await service.call('GET', `/api/v1/gifts/${answer.id}`);
    expect(fetched.body).toEqual(answer);
    expect(answer.campaign_id).toBe(bodies[index]!.campaign_id ?? null);
    expect(answer.appeal_id).toBe(bodies[index]!.appeal_id ?? null);
  }
  const events = await service.db.anyFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM events
    WHERE institution_id = ${service.tenant.institutionId} AND type = 'gift.created'
      AND object_id = ANY(${sql.array(
        answers.map((answer) => answer.id),
        'int8',
      )})
    GROUP BY object_id`);
  expect(events).toEqual(answers.map(() => 1));

  for (const tree of [[top, child], [child]]) {
    const shown = await progress(tree[0]!);
    expect({
      raised: shown.raised,
      gift_count: shown.gift_count,
      donor_count: shown.donor_count,
    }).toEqual(await recomputed(tree));
    const cents = (rows: { raised: number }[]) =>
      rows.reduce((sum, row) => sum + Math.round(row.raised * 100), 0);
    expect(cents(shown.by_appeal)).toBe(Math.round(shown.raised * 100));
    expect(cents(shown.by_fund)).toBe(Math.round(shown.raised * 100));
  }
  const results = await service.call<{ raised: number; gift_count: number }>(
    'GET',
    `/api/v1/appeals/${ofChild}/results`,
  );
  expect(results.body.gift_count).toBe(1 + 20);

  // What they counted goes with a refund, a void and a delete, exactly.
  const [refunded, voided, removed] = answers.slice(1, 4).map((answer) => answer.id);
  expect(
    (
      await service.call('POST', `/api/v1/gifts/${refunded}/refunds`, {
        body: { amount: 5, refund_date: '2026-04-01' },
      })
    ).status,
  ).toBe(201);
  expect(
    (await service.call('POST', `/api/v1/gifts/${voided}/void`, { body: { reason: 'Error' } }))
      .status,
  ).toBe(200);
  expect((await service.call('DELETE', `/api/v1/gifts/${removed}`)).status).toBe(200);
  for (const tree of [[top, child], [child]]) {
    const shown = await progress(tree[0]!);
    expect({
      raised: shown.raised,
      gift_count: shown.gift_count,
      donor_count: shown.donor_count,
    }).toEqual(await recomputed(tree));
  }
}, 60_000);

test('coded gifts on both paths at once, one donor and one campaign: none waits in a circle, and progress is exact', async () => {
  const top = await campaign();
  const ofTop = await appeal({ campaign_id: top });
  const deadlocks = async () => {
    // A backend reports its counts when its transaction ends, at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await service.db.query(sql.unsafe`SELECT pg_stat_clear_snapshot()`);
    return Number(
      await service.db.oneFirst(sql.unsafe`
        SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`),
    );
  };
  // The donor's month rows of March and April, and its first month, there before the race (a
  // month's first gift racing one of the full path may still deadlock, and is retried).
  for (const gift_date of ['2026-03-15', '2026-04-15'])
    await created(postGift({ donor_id: donors[2], fund_id: funds[1], gift_date }));
  const before = await deadlocks();
  // Codes on a designation take the full path (its gift, then its lines and the totals); codes
  // at the gift take the grouped statements (the gifts and their lines, then the totals). Both
  // change this donor's month rows, its first month (shared by the two months) and this
  // campaign's totals rows.
  const bodies = Array.from({ length: 60 }, (_, n) => ({
    gift_date: n % 2 === 0 ? '2026-03-15' : '2026-04-15',
    ...(n % 3 === 0
      ? {
          amount: 10 + n,
          designations: [{ fund_id: funds[0], amount: 10 + n, campaign_id: top, appeal_id: ofTop }],
        }
      : { campaign_id: top, appeal_id: ofTop, fund_id: funds[1], amount: 10 + n }),
  }));
  await Promise.all(
    bodies.map((body) =>
      created(
        service.call('POST', '/api/v1/gifts', { body: giftBody({ donor_id: donors[2], ...body }) }),
      ),
    ),
  );
  expect(await deadlocks()).toBe(before);
  const shown = await progress(top);
  expect({
    raised: shown.raised,
    gift_count: shown.gift_count,
    donor_count: shown.donor_count,
  }).toEqual(await recomputed([top]));
  expect(shown.gift_count).toBe(60);
}, 60_000);

test('the statement holds the campaigns above the gift’s: a change of one waits for the gift', async () => {
  const top = await campaign();
  const child = await campaign({ parent_id: top });
  let answered = false;
  const pending = await service.db.transaction(async (tx) => {
    // A change of the top campaign, uncommitted: the full path, which holds the campaigns only
    // FOR KEY SHARE, would not wait for it; the one statement holds the tree it read FOR SHARE.
    await tx.query(sql.unsafe`UPDATE campaigns SET name = name WHERE id = ${top}`);
    const request = postGift({ campaign_id: child }).then((response) => {
      answered = true;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(answered).toBe(false);
    return { request };
  });
  expect((await pending.request).status).toBe(201);
  expect(await progress(top)).toMatchObject({ raised: 100, gift_count: 1, donor_count: 1 });
});

test('a campaign moved while gifts are coded below it: both trees count exactly the gifts under them', async () => {
  const [from, to] = [await campaign(), await campaign()];
  const moved = await campaign({ parent_id: from });
  await gift({ campaign_id: moved });
  const sending = Array.from({ length: 30 }, (_, n) =>
    gift({ campaign_id: moved, donor_id: donors[n % 3], amount: 1 + n }),
  );
  const move = service.call('PATCH', `/api/v1/campaigns/${moved}`, { body: { parent_id: to } });
  await Promise.all(sending);
  expect((await move).status).toBe(200);
  sending.push(gift({ campaign_id: moved, amount: 7 }));
  await Promise.all(sending);
  expect(await progress(from)).toMatchObject({ raised: 0, gift_count: 0, donor_count: 0 });
  const all = await recomputed([moved]);
  expect(all.gift_count).toBe(32);
  expect(await progress(to)).toMatchObject(all);
  expect(await progress(moved)).toMatchObject(all);
}, 60_000);

test('codes closed, refused or changed since the worker last read them are judged in full', async () => {
  const [first, second] = [await campaign(), await campaign()];
  const before = async () => ({ gifts: await giftCount(), first: await progress(first) });
  const refused = async (body: Record<string, unknown>, param: string, code: string) => {
    const was = await before();
    const response = await postGift(body);
    expect(response.status).toBe(422);
    expect(response.body.error.errors).toEqual([expect.objectContaining({ param, code })]);
    expect(await before()).toEqual(was);
  };

  // An appeal moved to another campaign after a dry run read it: its gifts count there.
  const moving = await appeal({ campaign_id: first });
  const dry = await service.call('POST', '/api/v1/gifts?dry_run=true', {
    body: giftBody({ appeal_id: moving }),
  });
  expect(dry.status).toBe(201);
  expect(
    (await service.call('PATCH', `/api/v1/appeals/${moving}`, { body: { campaign_id: second } }))
      .status,
  ).toBe(200);
  await gift({ appeal_id: moving, amount: 30 });
  expect(await progress(first)).toMatchObject({ raised: 0, gift_count: 0 });
  expect(await progress(second)).toMatchObject({ raised: 30, gift_count: 1 });

  // An appeal of another campaign than the gift's.
  await gift({ campaign_id: first });
  await refused({ campaign_id: first, appeal_id: moving }, 'appeal_id', 'invalid_value');
  // Another institution's campaign is one that does not exist.
  const theirs = await campaign({}, other.key);
  await refused({ campaign_id: theirs }, 'campaign_id', 'reference_not_found');
  // Closed since the last gift coded to them.
  const closing = await appeal({ campaign_id: first });
  await gift({ campaign_id: first, appeal_id: closing });
  expect(
    (await service.call('PATCH', `/api/v1/appeals/${closing}`, { body: { status: 'closed' } }))
      .status,
  ).toBe(200);
  await refused({ campaign_id: first, appeal_id: closing }, 'appeal_id', 'reference_inactive');
  expect(
    (await service.call('PATCH', `/api/v1/campaigns/${first}`, { body: { status: 'closed' } }))
      .status,
  ).toBe(200);
  await refused({ campaign_id: first }, 'campaign_id', 'reference_inactive');
});
