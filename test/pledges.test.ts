// Pledges (giving.md §5): the schedule, payments as gifts, the balance they leave, the state
// machine, and the figures that read pledges (donor giving, fund totals, receivables).
import { sql } from 'slonik';
import { created, ISO_MS } from './helpers/responses.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { expectSameErrorThreeWays, invalid } from './helpers/threeWays.js';

let service: TestService;
const ids = { donor: 0, otherDonor: 0, fundA: 0, fundB: 0 };

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: '2026-03-15' });
  const post = (path: string, body: Record<string, unknown>) =>
    created<{ id: number }>(service.call('POST', `/api/v1${path}`, { body }));
  ids.donor = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'L',
      email: 'ada@example.org',
    })
  ).id;
  ids.otherDonor = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Bo',
      last_name: 'B',
      email: 'bo@example.org',
    })
  ).id;
  ids.fundA = (await post('/funds', { name: 'Annual', code: 'ANNUAL' })).id;
  ids.fundB = (await post('/funds', { name: 'Library', code: 'LIBRARY' })).id;
});

afterAll(async () => {
  await service?.close();
});

interface Pledge {
  id: number;
  status: string;
  amount_paid: number;
  balance: number;
  amount_written_off: number;
  next_due_on: string | null;
  overdue_amount: number;
  installments: {
    number: number;
    due_on: string;
    amount: number;
    amount_paid: number;
    status: string;
  }[];
  [key: string]: unknown;
}

const pledgeBody = (overrides: Record<string, unknown> = {}) => ({
  donor_id: ids.donor,
  amount: 100,
  pledge_date: '2026-01-10',
  designations: [
    { fund_id: ids.fundA, amount: 70 },
    { fund_id: ids.fundB, amount: 30 },
  ],
  schedule: { frequency: 'monthly', installments: 3, first_due_on: '2026-01-31' },
  ...overrides,
});

const postPledge = (overrides: Record<string, unknown> = {}) =>
  created<Pledge>(service.call('POST', '/api/v1/pledges', { body: pledgeBody(overrides) }));
const getPledge = async (id: number) =>
  (await service.call<Pledge>('GET', `/api/v1/pledges/${id}`)).body;
const pay = (pledgeId: number, amount: number, extra: Record<string, unknown> = {}) =>
  service.call<{ id: number; designations: unknown[]; pledge_id: number }>(
    'POST',
    '/api/v1/gifts',
    {
      body: {
        donor_id: ids.donor,
        amount,
        subject: 'Pledge payment',
        gift_date: '2026-02-01',
        pledge_id: pledgeId,
        ...extra,
      },
    },
  );
const storedPledge = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT amount::text, amount_paid::text, amount_written_off::text, status,
      next_due_on::text, fund_outstanding, installments, schedule
    FROM pledges WHERE id = ${id}`) as Promise<Record<string, unknown>>;
const pledgeCount = () => service.count('pledges');
const giftsOf = (pledgeId: number) =>
  service.db.anyFirst(sql.unsafe`SELECT id FROM gifts WHERE pledge_id = ${pledgeId} ORDER BY id`);

describe('POST /pledges', () => {
  test('201: the schedule expands month-end clamped, the cents left over on the last installment', async () => {
    const response = await service.call<Pledge>('POST', '/api/v1/pledges', {
      body: pledgeBody({
        amount: 100,
        schedule: { frequency: 'monthly', installments: 3, first_due_on: '2024-01-31' },
        pledge_date: '2024-01-01',
      }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/pledges/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'pledge',
      donor_id: ids.donor,
      amount: 100,
      currency: 'USD',
      exchange_rate: 1,
      base_amount: 100,
      pledge_date: '2024-01-01',
      fund_id: null,
      designations: [
        { fund_id: ids.fundA, amount: 70, campaign_id: null, appeal_id: null },
        { fund_id: ids.fundB, amount: 30, campaign_id: null, appeal_id: null },
      ],
      schedule: { frequency: 'monthly', installments: 3, first_due_on: '2024-01-31' },
      installments: [
        { number: 1, due_on: '2024-01-31', amount: 33.33, amount_paid: 0, status: 'overdue' },
        { number: 2, due_on: '2024-02-29', amount: 33.33, amount_paid: 0, status: 'overdue' },
        { number: 3, due_on: '2024-03-31', amount: 33.34, amount_paid: 0, status: 'overdue' },
      ],
      amount_paid: 0,
      balance: 100,
      amount_written_off: 0,
      base_amount_paid: 0,
      base_balance: 100,
      status: 'open',
      next_due_on: '2024-01-31',
      overdue_amount: 100,
      note: null,
      close_reason: null,
      closed_at: null,
      campaign_id: null,
      appeal_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await storedPledge(response.body.id)).toEqual({
      amount: '100.00',
      amount_paid: '0.00',
      amount_written_off: '0.00',
      status: 'open',
      next_due_on: '2024-01-31',
      fund_outstanding: [
        { fund_id: ids.fundA, amount: 70 },
        { fund_id: ids.fundB, amount: 30 },
      ],
      installments: [
        { number: 1, due_on: '2024-01-31', amount: 33.33 },
        { number: 2, due_on: '2024-02-29', amount: 33.33 },
        { number: 3, due_on: '2024-03-31', amount: 33.34 },
      ],
      schedule: { frequency: 'monthly', installments: 3, first_due_on: '2024-01-31' },
    });
  });

  test('quarterly and annual schedules keep the day, clamped (a Feb 29 start is Feb 28 in other years)', async () => {
    const quarterly = await postPledge({
      amount: 1,
      fund_id: ids.fundA,
      designations: undefined,
      pledge_date: '2026-01-01',
      schedule: { frequency: 'quarterly', installments: 4, first_due_on: '2026-11-30' },
    });
    expect(quarterly.installments.map((i) => [i.due_on, i.amount, i.status])).toEqual([
      ['2026-11-30', 0.25, 'due'],
      ['2027-02-28', 0.25, 'due'],
      ['2027-05-30', 0.25, 'due'],
      ['2027-08-30', 0.25, 'due'],
    ]);
    expect(quarterly.fund_id).toBe(ids.fundA);
    const annual = await postPledge({
      amount: 1000,
      designations: [],
      pledge_date: '2024-01-01',
      schedule: { frequency: 'annually', installments: 5, first_due_on: '2028-02-29' },
    });
    expect(annual.installments.map((i) => i.due_on)).toEqual([
      '2028-02-29',
      '2029-02-28',
      '2030-02-28',
      '2031-02-28',
      '2032-02-29',
    ]);
    expect(annual.fund_id).toBeNull();
  });

  test('a dry run answers id 0 and the same body, and writes nothing', async () => {
    const before = await pledgeCount();
    const dry = await service.call<Pledge>('POST', '/api/v1/pledges?dry_run=true', {
      body: pledgeBody(),
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    const real = await service.call<Pledge>('POST', '/api/v1/pledges', { body: pledgeBody() });
    expect({ ...dry.body, id: real.body.id, created_at: null, updated_at: null }).toEqual({
      ...real.body,
      created_at: null,
      updated_at: null,
    });
    expect(await pledgeCount()).toBe(before + 1);
  });

  test('an Idempotency-Key replays the first answer and makes one pledge', async () => {
    const before = await pledgeCount();
    const first = await service.call<Pledge>('POST', '/api/v1/pledges', {
      body: pledgeBody(),
      headers: { 'Idempotency-Key': 'pledge-once' },
    });
    const again = await service.call<Pledge>('POST', '/api/v1/pledges', {
      body: pledgeBody(),
      headers: { 'Idempotency-Key': 'pledge-once' },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await pledgeCount()).toBe(before + 1);
  });

  test.each([
    [
      'installments not summing',
      { designations: [{ fund_id: 1, amount: 1 }] },
      [{ param: 'designations', code: 'designation_total_mismatch' }],
    ],
    ['fund_id with designations', { fund_id: 1 }, [{ param: 'fund_id', code: 'not_allowed' }]],
    [
      'one_time with 2 installments',
      { schedule: { frequency: 'one_time', installments: 2, first_due_on: '2026-02-01' } },
      [{ param: 'schedule.installments', code: 'invalid_value' }],
    ],
    [
      '121 installments',
      { schedule: { frequency: 'monthly', installments: 121, first_due_on: '2026-02-01' } },
      [{ param: 'schedule.installments', code: 'out_of_range' }],
    ],
    [
      'more installments than cents',
      {
        amount: 0.02,
        designations: [],
        schedule: { frequency: 'monthly', installments: 3, first_due_on: '2026-02-01' },
      },
      [{ param: 'schedule.installments', code: 'out_of_range' }],
    ],
    [
      'first due before the pledge',
      { schedule: { frequency: 'monthly', installments: 3, first_due_on: '2026-01-09' } },
      [{ param: 'schedule.first_due_on', code: 'out_of_range' }],
    ],
    [
      'a bad date and frequency',
      { schedule: { frequency: 'weekly', installments: 3, first_due_on: '2026-02-30' } },
      [
        { param: 'schedule.frequency', code: 'invalid_value' },
        { param: 'schedule.first_due_on', code: 'invalid_format' },
      ],
    ],
    ['no schedule', { schedule: undefined }, [{ param: 'schedule', code: 'required' }]],
    [
      'read-only fields',
      { status: 'fulfilled', balance: 0 },
      [
        { param: 'status', code: 'unknown_field' },
        { param: 'balance', code: 'unknown_field' },
      ],
    ],
  ])('422 for %s, the same three ways, nothing written', async (_name, overrides, expected) => {
    const body: Record<string, unknown> = pledgeBody(overrides as Record<string, unknown>);
    // The table is built before the funds exist: a fund it names is the first fund.
    if ((overrides as { designations?: unknown }).designations)
      body.designations = (overrides as { designations: { amount: number }[] }).designations.map(
        (part) => ({ fund_id: ids.fundA, amount: part.amount }),
      );
    if ((overrides as { fund_id?: number }).fund_id) body.fund_id = ids.fundA;
    await expectSameErrorThreeWays(
      service,
      '/api/v1/pledges',
      'POST',
      body,
      invalid(expected),
      pledgeCount,
    );
  });

  test('another institution’s donor and fund are reference_not_found', async () => {
    const other = await service.createTenant('Other College');
    const donor = await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        key: other.key,
        body: { role: 'Individual', first_name: 'O', last_name: 'X', email: 'o@example.org' },
      }),
    );
    const fund = await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', {
        key: other.key,
        body: { name: 'Theirs', code: 'THEIRS' },
      }),
    );
    await expectSameErrorThreeWays(
      service,
      '/api/v1/pledges',
      'POST',
      pledgeBody({ donor_id: donor.id, designations: undefined, fund_id: fund.id }),
      invalid([
        { param: 'donor_id', code: 'reference_not_found' },
        { param: 'fund_id', code: 'reference_not_found' },
      ]),
      pledgeCount,
    );
    const theirs = await created<Pledge>(
      service.call('POST', '/api/v1/pledges', {
        key: other.key,
        body: pledgeBody({ donor_id: donor.id, designations: undefined, fund_id: fund.id }),
      }),
    );
    expect((await service.call('GET', `/api/v1/pledges/${theirs.id}`)).status).toBe(404);
    expect(
      (await service.call('PATCH', `/api/v1/pledges/${theirs.id}`, { body: { note: 'x' } })).status,
    ).toBe(404);
    expect(
      (
        await service.call('POST', `/api/v1/pledges/${theirs.id}/write-off`, {
          body: { reason: 'x' },
        })
      ).status,
    ).toBe(404);
    // A payment naming it is as one naming nothing.
    const gifts = () => service.count('gifts');
    await expectSameErrorThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      {
        donor_id: ids.donor,
        amount: 1,
        subject: 'S',
        gift_date: '2026-02-01',
        pledge_id: theirs.id,
      },
      invalid([{ param: 'pledge_id', code: 'reference_not_found' }]),
      gifts,
    );
    const list = await service.call<{ data: unknown[] }>(
      'GET',
      `/api/v1/pledges?donor_id=${donor.id}`,
    );
    expect(list.body.data).toEqual([]);
  });
});

describe('payments', () => {
  test('fill the earliest installments first, take the pledge’s split pro rata, and fulfil it', async () => {
    const pledge = await postPledge({
      amount: 100,
      designations: [
        { fund_id: ids.fundA, amount: 66.67 },
        { fund_id: ids.fundB, amount: 33.33 },
      ],
    });
    const first = await pay(pledge.id, 40);
    expect(first.status).toBe(201);
    // 66.67% of 40.00 is 26.668, rounded down; the cent left over goes to the last fund.
    expect(first.body.designations).toEqual([
      {
        fund_id: ids.fundA,
        amount: 26.66,
        amount_refunded: 0,
        base_amount: 26.66,
        campaign_id: null,
        appeal_id: null,
      },
      {
        fund_id: ids.fundB,
        amount: 13.34,
        amount_refunded: 0,
        base_amount: 13.34,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    expect(first.body.pledge_id).toBe(pledge.id);
    let now = await getPledge(pledge.id);
    expect(now.installments.map((i) => [i.amount_paid, i.status])).toEqual([
      [33.33, 'paid'],
      [6.67, 'overdue'],
      [0, 'due'],
    ]);
    expect({
      paid: now.amount_paid,
      balance: now.balance,
      next: now.next_due_on,
      overdue: now.overdue_amount,
      status: now.status,
    }).toEqual({
      paid: 40,
      balance: 60,
      next: '2026-02-28',
      overdue: 26.66,
      status: 'open',
    });
    // The payment's own split wins over the pledge's.
    const own = await pay(pledge.id, 60, { fund_id: ids.fundB });
    expect(own.status).toBe(201);
    expect(own.body.designations).toEqual([
      {
        fund_id: ids.fundB,
        amount: 60,
        amount_refunded: 0,
        base_amount: 60,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    now = await getPledge(pledge.id);
    expect({
      status: now.status,
      balance: now.balance,
      next: now.next_due_on,
      overdue: now.overdue_amount,
    }).toEqual({ status: 'fulfilled', balance: 0, next: null, overdue: 0 });
    expect(now.installments.every((i) => i.status === 'paid')).toBe(true);
    // A fulfilled pledge takes no more.
    await expectSameErrorThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      {
        donor_id: ids.donor,
        amount: 1,
        subject: 'S',
        gift_date: '2026-02-01',
        pledge_id: pledge.id,
      },
      invalid([{ param: 'pledge_id', code: 'invalid_value' }]),
      () => storedPledge(pledge.id),
    );
  });

  test('422 exceeds_pledge_balance and another donor’s payment change nothing', async () => {
    const pledge = await postPledge();
    await pay(pledge.id, 90);
    const state = async () => [await storedPledge(pledge.id), await giftsOf(pledge.id)];
    await expectSameErrorThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      {
        donor_id: ids.donor,
        amount: 10.01,
        subject: 'S',
        gift_date: '2026-02-01',
        pledge_id: pledge.id,
      },
      invalid([{ param: 'amount', code: 'exceeds_pledge_balance' }]),
      state,
    );
    await expectSameErrorThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      {
        donor_id: ids.otherDonor,
        amount: 1,
        subject: 'S',
        gift_date: '2026-02-01',
        pledge_id: pledge.id,
      },
      invalid([{ param: 'pledge_id', code: 'invalid_value' }]),
      state,
    );
  });

  test('refunding and voiding a payment give its amount back to the balance and reopen the pledge', async () => {
    const pledge = await postPledge({
      amount: 50,
      designations: undefined,
      fund_id: ids.fundA,
      schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-04-01' },
    });
    const payment = await pay(pledge.id, 50);
    expect((await getPledge(pledge.id)).status).toBe('fulfilled');
    const refund = await service.call('POST', `/api/v1/gifts/${payment.body.id}/refunds`, {
      body: { amount: 20, refund_date: '2026-02-02' },
    });
    expect(refund.status).toBe(201);
    let now = await getPledge(pledge.id);
    expect({
      status: now.status,
      paid: now.amount_paid,
      balance: now.balance,
      next: now.next_due_on,
    }).toEqual({ status: 'open', paid: 30, balance: 20, next: '2026-04-01' });
    expect((await storedPledge(pledge.id)).fund_outstanding).toEqual([
      { fund_id: ids.fundA, amount: 20 },
    ]);
    const voided = await service.call('POST', `/api/v1/gifts/${payment.body.id}/void`, {
      body: { reason: 'Bounced' },
    });
    expect(voided.status).toBe(200);
    now = await getPledge(pledge.id);
    expect({ status: now.status, paid: now.amount_paid, balance: now.balance }).toEqual({
      status: 'open',
      paid: 0,
      balance: 50,
    });
    // The voided payment keeps its pledge: pledge_id is money.
    const moved = await service.call('PATCH', `/api/v1/gifts/${payment.body.id}`, {
      body: { pledge_id: null },
    });
    expect(moved.status).toBe(409);
    expect((moved.body as { error: { code: string } }).error.code).toBe('gift_locked');
  });

  test('deleting or moving an unreceipted payment gives its amount back', async () => {
    const a = await postPledge();
    const b = await postPledge();
    const payment = await pay(a.id, 30);
    const moved = await service.call<{ pledge_id: number }>(
      'PATCH',
      `/api/v1/gifts/${payment.body.id}`,
      { body: { pledge_id: b.id } },
    );
    expect(moved.status).toBe(200);
    expect([(await getPledge(a.id)).amount_paid, (await getPledge(b.id)).amount_paid]).toEqual([
      0, 30,
    ]);
    const raised = await service.call('PATCH', `/api/v1/gifts/${payment.body.id}`, {
      body: { amount: 100, designations: [] },
    });
    expect(raised.status).toBe(200);
    expect((await getPledge(b.id)).status).toBe('fulfilled');
    const tooMuch = await service.call('PATCH', `/api/v1/gifts/${payment.body.id}`, {
      body: { amount: 100.01 },
    });
    expect(tooMuch.status).toBe(422);
    expect((await service.call('DELETE', `/api/v1/gifts/${payment.body.id}`)).status).toBe(200);
    expect(await getPledge(b.id)).toMatchObject({ status: 'open', amount_paid: 0, balance: 100 });
  });

  test('the old type pledge is still accepted', async () => {
    const gift = await created<{ type: string }>(
      service.call('POST', '/api/v1/gifts', {
        body: {
          donor_id: ids.donor,
          amount: 5,
          subject: 'S',
          gift_date: '2026-02-01',
          type: 'pledge',
        },
      }),
    );
    expect(gift.type).toBe('pledge');
  });
});

describe('state machine', () => {
  test('write-off: open → written_off, the balance written off; a second is 409', async () => {
    const pledge = await postPledge();
    await pay(pledge.id, 25);
    const dry = await service.call<Pledge>(
      'POST',
      `/api/v1/pledges/${pledge.id}/write-off?dry_run=true`,
      { body: { reason: 'Moved abroad' } },
    );
    const response = await service.call<Pledge>('POST', `/api/v1/pledges/${pledge.id}/write-off`, {
      body: { reason: 'Moved abroad' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'written_off',
      amount_paid: 25,
      amount_written_off: 75,
      balance: 0,
      next_due_on: null,
      overdue_amount: 0,
      close_reason: 'Moved abroad',
      closed_at: expect.stringMatching(ISO_MS),
    });
    expect({ ...dry.body, closed_at: null, updated_at: null }).toEqual({
      ...response.body,
      closed_at: null,
      updated_at: null,
    });
    expect(await storedPledge(pledge.id)).toMatchObject({
      status: 'written_off',
      amount_written_off: '75.00',
      next_due_on: null,
      fund_outstanding: [],
    });
    for (const action of ['write-off', 'cancel'])
      await expectSameErrorThreeWays(
        service,
        `/api/v1/pledges/${pledge.id}/${action}`,
        'POST',
        { reason: 'Again' },
        { status: 409, code: 'invalid_state_transition' },
        () => storedPledge(pledge.id),
      );
    await expectSameErrorThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      {
        donor_id: ids.donor,
        amount: 1,
        subject: 'S',
        gift_date: '2026-02-01',
        pledge_id: pledge.id,
      },
      invalid([{ param: 'pledge_id', code: 'invalid_value' }]),
      () => storedPledge(pledge.id),
    );
  });

  test('cancel: only while nothing is paid', async () => {
    const paid = await postPledge();
    await pay(paid.id, 1);
    await expectSameErrorThreeWays(
      service,
      `/api/v1/pledges/${paid.id}/cancel`,
      'POST',
      { reason: 'No' },
      { status: 409, code: 'invalid_state_transition' },
      () => storedPledge(paid.id),
    );
    const unpaid = await postPledge();
    await expectSameErrorThreeWays(
      service,
      `/api/v1/pledges/${unpaid.id}/cancel`,
      'POST',
      {},
      invalid([{ param: 'reason', code: 'required' }]),
      () => storedPledge(unpaid.id),
    );
    const response = await service.call<Pledge>('POST', `/api/v1/pledges/${unpaid.id}/cancel`, {
      body: { reason: 'Wrong donor' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'cancelled',
      amount_paid: 0,
      balance: 100,
      amount_written_off: 0,
      next_due_on: null,
    });
    expect(await storedPledge(unpaid.id)).toMatchObject({
      status: 'cancelled',
      fund_outstanding: [],
    });
  });

  test('PATCH: the promise may change until a gift names it, then only note', async () => {
    const pledge = await postPledge();
    const changed = await service.call<Pledge>('PATCH', `/api/v1/pledges/${pledge.id}`, {
      body: {
        amount: 120,
        designations: [{ fund_id: ids.fundA, amount: 120 }],
        schedule: { frequency: 'quarterly', installments: 2, first_due_on: '2026-02-15' },
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.installments.map((i) => [i.due_on, i.amount])).toEqual([
      ['2026-02-15', 60],
      ['2026-05-15', 60],
    ]);
    expect(changed.body.fund_id).toBe(ids.fundA);
    await pay(pledge.id, 10);
    await expectSameErrorThreeWays(
      service,
      `/api/v1/pledges/${pledge.id}`,
      'PATCH',
      { amount: 150, pledge_date: '2026-01-01' },
      invalid([
        { param: 'amount', code: 'not_allowed' },
        { param: 'designations', code: 'not_allowed' },
        { param: 'pledge_date', code: 'not_allowed' },
      ]),
      () => storedPledge(pledge.id),
    );
    const note = await service.call<Pledge>('PATCH', `/api/v1/pledges/${pledge.id}`, {
      body: { note: 'Pays by transfer' },
    });
    expect(note.status).toBe(200);
    expect(note.body).toMatchObject({
      note: 'Pays by transfer',
      amount_paid: 10,
      balance: 110,
      next_due_on: '2026-02-15',
    });
  });
});

describe('figures', () => {
  test('donor giving and fund totals count what open pledges still owe; receivables list them', async () => {
    const tenant = await service.createTenant('Figures U');
    const call = <T>(method: string, path: string, body?: unknown) =>
      service.call<T>(method, `/api/v1${path}`, { key: tenant.key, body });
    const donor = (
      await call<{ id: number }>('POST', '/donors', {
        role: 'Individual',
        first_name: 'F',
        last_name: 'G',
        email: 'f@example.org',
      })
    ).body.id;
    const fundA = (await call<{ id: number }>('POST', '/funds', { name: 'A', code: 'A' })).body.id;
    const fundB = (await call<{ id: number }>('POST', '/funds', { name: 'B', code: 'B' })).body.id;
    const body = (amount: number, designations: unknown[], first: string) => ({
      donor_id: donor,
      amount,
      pledge_date: '2026-01-01',
      designations,
      schedule: { frequency: 'monthly', installments: 2, first_due_on: first },
    });
    const split = (
      await call<Pledge>(
        'POST',
        '/pledges',
        body(
          100,
          [
            { fund_id: fundA, amount: 66.67 },
            { fund_id: fundB, amount: 33.33 },
          ],
          '2026-03-01',
        ),
      )
    ).body;
    const later = (
      await call<Pledge>(
        'POST',
        '/pledges',
        body(10, [{ fund_id: fundB, amount: 10 }], '2026-05-01'),
      )
    ).body;
    const gone = (await call<Pledge>('POST', '/pledges', body(5, [], '2026-03-01'))).body;
    await call('POST', `/pledges/${gone.id}/cancel`, { reason: 'x' });
    await call('POST', '/gifts', {
      donor_id: donor,
      amount: 10,
      subject: 'S',
      gift_date: '2026-02-01',
      pledge_id: split.id,
      designations: [{ fund_id: fundA, amount: 10 }],
    });
    // Balance 90, split 66.67 : 33.33 → 60.003 rounded down to 60.00, 30.00 the rest.
    const giving = (
      await call<{ giving: { pledged_outstanding: number; total_amount: number } }>(
        'GET',
        `/donors/${donor}`,
      )
    ).body.giving;
    expect(giving.pledged_outstanding).toBe(100);
    expect(giving.total_amount).toBe(10);
    const totals = async (fund: number) =>
      (
        await call<{ totals: { pledged_outstanding: number; gifts_received: number } }>(
          'GET',
          `/funds/${fund}`,
        )
      ).body.totals;
    expect(await totals(fundA)).toMatchObject({ pledged_outstanding: 60, gifts_received: 10 });
    expect(await totals(fundB)).toMatchObject({ pledged_outstanding: 40, gifts_received: 0 });
    const receivables = await call<{ object: string; url: string; data: unknown[] }>(
      'GET',
      '/pledges/receivables',
    );
    expect(receivables.status).toBe(200);
    expect(receivables.body.data).toEqual([
      {
        object: 'pledge_receivable',
        pledge_id: later.id,
        donor_id: donor,
        amount: 10,
        currency: 'USD',
        balance: 10,
        base_balance: 10,
        overdue_amount: 0,
        next_due_on: '2026-05-01',
      },
      {
        object: 'pledge_receivable',
        pledge_id: split.id,
        donor_id: donor,
        amount: 100,
        currency: 'USD',
        balance: 90,
        base_balance: 90,
        overdue_amount: 40,
        next_due_on: '2026-03-01',
      },
    ]);
    const due = await call<{ data: { pledge_id: number }[] }>(
      'GET',
      '/pledges/receivables?due_before=2026-03-02',
    );
    expect(due.body.data.map((row) => row.pledge_id)).toEqual([split.id]);
    const none = await call<{ data: unknown[] }>(
      'GET',
      '/pledges/receivables?due_before=2026-03-01',
    );
    expect(none.body.data).toEqual([]);
    const byFund = await call<{ data: { pledge_id: number }[] }>(
      'GET',
      `/pledges/receivables?fund_id=${fundA}`,
    );
    expect(byFund.body.data.map((row) => row.pledge_id)).toEqual([split.id]);
    const list = await call<{ data: { id: number }[] }>(
      'GET',
      `/pledges?status=cancelled&donor_id=${donor}`,
    );
    expect(list.body.data.map((row) => row.id)).toEqual([gone.id]);
    const listDue = await call<{ data: { id: number }[] }>(
      'GET',
      `/pledges?due_before=2026-04-01&fund_id=${fundB}`,
    );
    expect(listDue.body.data.map((row) => row.id)).toEqual([split.id]);
    expect((await call('GET', '/pledges/receivables?due_before=2026-02-30')).status).toBe(400);
  });
});

test('two workers racing for the last of a balance: exactly one payment lands, the others 422', async () => {
  await service.startWorker();
  for (let round = 0; round < 3; round += 1) {
    const pledge = await postPledge();
    await pay(pledge.id, 50);
    const answers = await Promise.all([pay(pledge.id, 40), pay(pledge.id, 40), pay(pledge.id, 40)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422, 422]);
    for (const answer of answers.filter((a) => a.status === 422))
      expect(
        (answer.body as unknown as { error: { errors: { code: string }[] } }).error.errors.map(
          (e) => e.code,
        ),
      ).toEqual(['exceeds_pledge_balance']);
    expect(await storedPledge(pledge.id)).toMatchObject({ amount_paid: '90.00', status: 'open' });
    expect(await giftsOf(pledge.id)).toHaveLength(2);
  }
});
