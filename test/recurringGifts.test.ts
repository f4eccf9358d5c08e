// Recurring gifts (giving.md §6): the standing instruction, its state machine, its payments (gifts
// naming it) and the figures read from them, on a calendar pinned by CLOCK_TODAY.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { expectSameErrorThreeWays, invalid } from './helpers/threeWays.js';

const TODAY = '2026-03-15';

interface RecurringGift {
  id: number;
  object: string;
  donor_id: number;
  amount: number;
  currency: string;
  frequency: string;
  start_on: string;
  fund_id: number | null;
  designations: { fund_id: number; amount: number }[];
  status: string;
  next_expected_on: string | null;
  last_gift_date: string | null;
  gift_count: number;
  total_given: number;
  lapsed: boolean;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
}

let service: TestService;
let other: Tenant;
const ids = {
  donor: 0,
  spouse: 0,
  fund: 0,
  fundB: 0,
  closedFund: 0,
  otherDonor: 0,
  otherFund: 0,
  otherRecurring: 0,
};
let emails = 0;

const path = '/api/v1/recurring-gifts';

const createDonor = async (key?: string) =>
  (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        key,
        body: {
          role: 'Individual',
          first_name: 'Grace',
          last_name: 'Hopper',
          email: `giver${++emails}@example.org`,
        },
      }),
    )
  ).id;

const createFund = async (code: string, extra: Record<string, unknown> = {}, key?: string) =>
  (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', { key, body: { name: code, code, ...extra } }),
    )
  ).id;

const recurringBody = (overrides: Record<string, unknown> = {}) => ({
  donor_id: ids.donor,
  amount: 25,
  frequency: 'monthly',
  start_on: '2026-03-01',
  ...overrides,
});

const createRecurring = (overrides: Record<string, unknown> = {}, key?: string) =>
  created<RecurringGift>(service.call('POST', path, { key, body: recurringBody(overrides) }));

const patch = (id: number, body: Record<string, unknown>) =>
  service.call<RecurringGift>('PATCH', `${path}/${id}`, { body });

const read = async (id: number) => (await service.call<RecurringGift>('GET', `${path}/${id}`)).body;

const pay = (
  recurringId: number,
  amount: number,
  giftDate: string,
  extra: Record<string, unknown> = {},
) =>
  created<{ id: number; recurring_gift_id: number | null }>(
    service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount,
        subject: 'Monthly gift',
        gift_date: giftDate,
        recurring_gift_id: recurringId,
        ...extra,
      },
    }),
  );

/** The stored recurring gifts, as the database holds them. */
const storedRecurring = async () =>
  (await service.db.any(sql.unsafe`
    SELECT id, institution_id, donor_id, amount::text AS amount, currency, frequency,
           start_on::text AS start_on, designations, status, resumed_on::text AS resumed_on,
           updated_at
    FROM recurring_gifts ORDER BY id`)) as readonly ({ id: number } & Record<string, unknown>)[];

const storedPayments = () =>
  service.db.any(sql.unsafe`
    SELECT id, donor_id, recurring_gift_id, amount::text AS amount, status, updated_at
    FROM gifts ORDER BY id`);

const everything = async () => ({
  recurring: await storedRecurring(),
  gifts: await storedPayments(),
});

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
  other = await service.createTenant('Other College', 'USD');
  ids.donor = await createDonor();
  ids.spouse = await createDonor();
  ids.fund = await createFund('GENERAL');
  ids.fundB = await createFund('SCHOLAR');
  ids.closedFund = await createFund('OLD', { status: 'closed' });
  ids.otherDonor = await createDonor(other.key);
  ids.otherFund = await createFund('GENERAL', {}, other.key);
  ids.otherRecurring = (
    await created<RecurringGift>(
      service.call('POST', path, {
        key: other.key,
        body: {
          donor_id: ids.otherDonor,
          amount: 10,
          frequency: 'weekly',
          start_on: '2026-01-01',
        },
      }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

describe('POST /recurring-gifts', () => {
  test('creates a recurring gift: 201 with Location, the figures of no payment, stored as sent', async () => {
    const response = await service.call<RecurringGift>('POST', path, {
      body: recurringBody({ amount: 40.5, start_on: '2026-01-31', fund_id: ids.fund }),
    });
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.headers.get('Location')).toBe(`${path}/${id}`);
    expect(response.body).toEqual({
      id,
      object: 'recurring_gift',
      donor_id: ids.donor,
      amount: 40.5,
      currency: 'USD',
      exchange_rate: 1,
      base_amount: 40.5,
      frequency: 'monthly',
      start_on: '2026-01-31',
      fund_id: ids.fund,
      designations: [{ fund_id: ids.fund, amount: 40.5, campaign_id: null, appeal_id: null }],
      status: 'active',
      next_expected_on: '2026-01-31',
      last_gift_date: null,
      gift_count: 0,
      total_given: 0,
      // Jan 31 expected, Feb 28 too, and today is after Feb 28: more than one period late.
      lapsed: true,
      campaign_id: null,
      appeal_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await storedRecurring()).find((row) => row.id === id)).toEqual({
      id,
      institution_id: service.tenant.institutionId,
      donor_id: ids.donor,
      amount: '40.50',
      currency: 'USD',
      frequency: 'monthly',
      start_on: '2026-01-31',
      designations: [{ fund_id: ids.fund, amount: 40.5 }],
      status: 'active',
      resumed_on: null,
      updated_at: expect.anything(),
    });
    expect(await read(id)).toEqual(response.body);
  });

  test('a split across funds, another currency, and a start as paused', async () => {
    const recurring = await createRecurring({
      amount: 100,
      currency: 'EUR',
      exchange_rate: 1.085,
      frequency: 'quarterly',
      status: 'paused',
      designations: [
        { fund_id: ids.fund, amount: 60 },
        { fund_id: ids.fundB, amount: 40 },
      ],
    });
    expect(recurring).toMatchObject({
      currency: 'EUR',
      exchange_rate: 1.085,
      base_amount: 108.5,
      fund_id: null,
      designations: [
        { fund_id: ids.fund, amount: 60 },
        { fund_id: ids.fundB, amount: 40 },
      ],
      status: 'paused',
      next_expected_on: '2026-03-01',
      lapsed: false,
    });
  });

  test('a dry run answers the record it would create, with id 0, and writes nothing', async () => {
    const body = recurringBody({ start_on: '2026-02-10', frequency: 'weekly' });
    const before = await everything();
    const dry = await service.call<RecurringGift>('POST', `${path}?dry_run=true`, { body });
    expect(dry.status).toBe(201);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await everything()).toEqual(before);
    const real = await service.call<RecurringGift>('POST', path, { body });
    expect(dry.body).toEqual({
      ...real.body,
      id: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(real.body).toMatchObject({ next_expected_on: '2026-02-10', lapsed: true });
  });

  test('a retry with the same Idempotency-Key replays the answer and writes one row', async () => {
    const body = recurringBody({ amount: 12.34 });
    const headers = { 'Idempotency-Key': 'recurring-once' };
    const first = await service.call<RecurringGift>('POST', path, { body, headers });
    const second = await service.call<RecurringGift>('POST', path, { body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.headers.get('Location')).toBe(`${path}/${first.body.id}`);
    const rows = await service.db.anyFirst(
      sql.unsafe`SELECT id FROM recurring_gifts WHERE amount = 12.34`,
    );
    expect(rows).toEqual([first.body.id]);
  });

  const cases: Array<[string, () => Record<string, unknown>, { param: string; code: string }[]]> = [
    [
      'nothing sent',
      () => ({}),
      [
        { param: 'donor_id', code: 'required' },
        { param: 'amount', code: 'required' },
        { param: 'frequency', code: 'required' },
        { param: 'start_on', code: 'required' },
      ],
    ],
    [
      'an unknown frequency',
      () => recurringBody({ frequency: 'daily' }),
      [{ param: 'frequency', code: 'invalid_value' }],
    ],
    [
      'a date that does not exist',
      () => recurringBody({ start_on: '2026-02-30' }),
      [{ param: 'start_on', code: 'invalid_format' }],
    ],
    [
      'money with three decimals, and a zero',
      () => recurringBody({ amount: 1.005, designations: [{ fund_id: ids.fund, amount: 0 }] }),
      [
        { param: 'amount', code: 'invalid_format' },
        { param: 'designations.0.amount', code: 'out_of_range' },
      ],
    ],
    [
      'a new recurring gift cannot start cancelled',
      () => recurringBody({ status: 'cancelled' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'fund_id together with designations',
      () => recurringBody({ fund_id: ids.fund, designations: [{ fund_id: ids.fund, amount: 25 }] }),
      [{ param: 'fund_id', code: 'not_allowed' }],
    ],
    [
      'designations that do not sum to the amount, one fund twice',
      () =>
        recurringBody({
          designations: [
            { fund_id: ids.fund, amount: 10 },
            { fund_id: ids.fund, amount: 10 },
          ],
        }),
      [
        { param: 'designations', code: 'designation_total_mismatch' },
        { param: 'designations.1.fund_id', code: 'already_in_use' },
      ],
    ],
    [
      'a closed fund',
      () => recurringBody({ fund_id: ids.closedFund }),
      [{ param: 'fund_id', code: 'reference_inactive' }],
    ],
    [
      'another institution’s donor and fund, as if they did not exist',
      () =>
        recurringBody({
          donor_id: ids.otherDonor,
          designations: [{ fund_id: ids.otherFund, amount: 25 }],
        }),
      [
        { param: 'donor_id', code: 'reference_not_found' },
        { param: 'designations.0.fund_id', code: 'reference_not_found' },
      ],
    ],
    [
      'a read-only figure and an unknown field',
      () => recurringBody({ next_expected_on: '2026-04-01', day_of_month: 1 }),
      [
        { param: 'next_expected_on', code: 'unknown_field' },
        { param: 'day_of_month', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(cases)('%s: 422, the same dry, nothing written', async (_name, body, expected) => {
    await expectSameErrorThreeWays(service, path, 'POST', body, invalid(expected), everything);
  });
});

describe('the state machine', () => {
  test('active → paused → active → cancelled; resuming restarts the schedule on today', async () => {
    const recurring = await createRecurring({ start_on: '2026-01-10' });
    expect(recurring).toMatchObject({ next_expected_on: '2026-01-10', lapsed: true });
    const paused = await patch(recurring.id, { status: 'paused' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      status: 'paused',
      next_expected_on: '2026-01-10',
      lapsed: false,
    });
    // A dry run of the resume answers what the resume answers, and writes nothing.
    const before = await everything();
    const dry = await service.call<RecurringGift>('PATCH', `${path}/${recurring.id}`, {
      body: { status: 'active' },
      headers: { 'Dry-Run': 'true' },
    });
    expect(await everything()).toEqual(before);
    const resumed = await patch(recurring.id, { status: 'active' });
    expect(resumed.body).toEqual({
      ...paused.body,
      status: 'active',
      // The payments expected while paused are not expected any more: the next date on or
      // after the day of the resume.
      next_expected_on: '2026-04-10',
      lapsed: false,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(dry.body).toEqual({ ...resumed.body, updated_at: expect.stringMatching(ISO_MS) });
    expect((await storedRecurring()).find((row) => row.id === recurring.id)).toMatchObject({
      status: 'active',
      resumed_on: TODAY,
    });
    const cancelled = await patch(recurring.id, { status: 'cancelled' });
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      next_expected_on: null,
      lapsed: false,
    });
  });

  test('paused → cancelled', async () => {
    const recurring = await createRecurring({ status: 'paused' });
    const cancelled = await patch(recurring.id, { status: 'cancelled' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
  });

  test.each([
    ['active', { status: 'active' }],
    ['paused', { status: 'paused' }],
    ['cancelled again', { status: 'cancelled' }],
    ['a new amount', { amount: 30 }],
    ['nothing at all', {}],
  ])(
    'a cancelled recurring gift takes no change (%s): 409 invalid_state_transition',
    async (_name, body) => {
      const recurring = await createRecurring();
      await patch(recurring.id, { status: 'cancelled' });
      await expectSameErrorThreeWays(
        service,
        `${path}/${recurring.id}`,
        'PATCH',
        body,
        { status: 409, code: 'invalid_state_transition' },
        everything,
      );
    },
  );
});

describe('PATCH /recurring-gifts/{id}', () => {
  test('the amount moves a single designation; a split needs new designations', async () => {
    const single = await createRecurring({ fund_id: ids.fund });
    const patched = await patch(single.id, { amount: 35 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      amount: 35,
      fund_id: ids.fund,
      designations: [{ fund_id: ids.fund, amount: 35 }],
    });
    const split = await createRecurring({
      amount: 20,
      designations: [
        { fund_id: ids.fund, amount: 10 },
        { fund_id: ids.fundB, amount: 10 },
      ],
    });
    await expectSameErrorThreeWays(
      service,
      `${path}/${split.id}`,
      'PATCH',
      { amount: 30 },
      invalid([{ param: 'designations', code: 'designation_total_mismatch' }]),
      everything,
    );
  });

  test('a fund closed since stays valid on the recurring gift that has it', async () => {
    const fund = await createFund('CLOSING');
    const recurring = await createRecurring({ fund_id: fund });
    await service.call('PATCH', `/api/v1/funds/${fund}`, { body: { status: 'closed' } });
    const patched = await patch(recurring.id, { amount: 26 });
    expect(patched.status).toBe(200);
    expect(patched.body.designations).toEqual([
      { fund_id: fund, amount: 26, campaign_id: null, appeal_id: null },
    ]);
  });

  test('a new schedule is answered as stored, and a dry run answers the same', async () => {
    const recurring = await createRecurring({ start_on: '2026-03-01', frequency: 'monthly' });
    expect(recurring).toMatchObject({ next_expected_on: '2026-03-01', lapsed: false });
    const change = { frequency: 'weekly', start_on: '2026-02-01' };
    const before = await everything();
    const dry = await service.call<RecurringGift>('PATCH', `${path}/${recurring.id}?dry_run=true`, {
      body: change,
    });
    expect(await everything()).toEqual(before);
    const real = await patch(recurring.id, change);
    expect(real.body).toEqual({
      ...recurring,
      ...change,
      next_expected_on: '2026-02-01',
      lapsed: true,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(dry.body).toEqual({ ...real.body, updated_at: expect.stringMatching(ISO_MS) });
  });

  test('the donor cannot change (not_allowed); sending the same donor is no change', async () => {
    const recurring = await createRecurring();
    await expectSameErrorThreeWays(
      service,
      `${path}/${recurring.id}`,
      'PATCH',
      { donor_id: ids.spouse },
      invalid([{ param: 'donor_id', code: 'not_allowed' }]),
      everything,
    );
    expect((await patch(recurring.id, { donor_id: ids.donor, amount: 26 })).status).toBe(200);
  });

  test('an unknown status is 422, not a transition', async () => {
    const recurring = await createRecurring();
    await expectSameErrorThreeWays(
      service,
      `${path}/${recurring.id}`,
      'PATCH',
      { status: 'stopped' },
      invalid([{ param: 'status', code: 'invalid_value' }]),
      everything,
    );
  });
});

describe('payments and the figures read from them', () => {
  test('payments count, month ends are clamped, refunds and voids change total_given', async () => {
    const recurring = await createRecurring({ start_on: '2026-01-31', amount: 20 });
    const first = await pay(recurring.id, 20, '2026-01-31');
    expect(first.recurring_gift_id).toBe(recurring.id);
    expect(await read(recurring.id)).toMatchObject({
      gift_count: 1,
      last_gift_date: '2026-01-31',
      total_given: 20,
      // Jan 31 → Feb 28 (clamped); the lapse would come after Mar 31.
      next_expected_on: '2026-02-28',
      lapsed: false,
    });
    const second = await pay(recurring.id, 20, '2026-02-28');
    expect(await read(recurring.id)).toMatchObject({
      gift_count: 2,
      last_gift_date: '2026-02-28',
      total_given: 40,
      // Counted from start_on, not from Feb 28: the month end comes back.
      next_expected_on: '2026-03-31',
    });
    const refund = await service.call('POST', `/api/v1/gifts/${first.id}/refunds`, {
      body: { amount: 5.25, refund_date: '2026-03-01' },
    });
    expect(refund.status).toBe(201);
    expect((await read(recurring.id)).total_given).toBe(34.75);
    const late = await pay(recurring.id, 20, '2026-03-10');
    expect(await read(recurring.id)).toMatchObject({
      gift_count: 3,
      last_gift_date: '2026-03-10',
      total_given: 54.75,
      next_expected_on: '2026-03-31',
    });
    const voided = await service.call('POST', `/api/v1/gifts/${late.id}/void`, {
      body: { reason: 'Entered twice' },
    });
    expect(voided.status).toBe(200);
    expect(await read(recurring.id)).toMatchObject({
      gift_count: 2,
      last_gift_date: '2026-02-28',
      total_given: 34.75,
      next_expected_on: '2026-03-31',
    });
    const listed = await service.call<Page<{ id: number }>>(
      'GET',
      `/api/v1/gifts?recurring_gift_id=${recurring.id}`,
    );
    expect(listed.body.data.map((gift) => gift.id)).toEqual([late.id, second.id, first.id]);
  });

  test('February 29 of a leap year and annual schedules', async () => {
    const recurring = await createRecurring({ start_on: '2024-02-29', frequency: 'annually' });
    await pay(recurring.id, 25, '2024-02-29');
    expect((await read(recurring.id)).next_expected_on).toBe('2025-02-28');
    await pay(recurring.id, 25, '2025-02-28');
    // 2026-02-28 expected, and today (2026-03-15) is not after 2027-02-28: not lapsed.
    expect(await read(recurring.id)).toMatchObject({
      next_expected_on: '2026-02-28',
      lapsed: false,
    });
  });

  test('a payment is a gift like any other: dry run, replay, its own designations', async () => {
    const recurring = await createRecurring({ fund_id: ids.fund });
    const body = {
      donor_id: ids.donor,
      amount: 25,
      subject: 'March',
      gift_date: '2026-03-01',
      recurring_gift_id: recurring.id,
    };
    const before = await everything();
    const dry = await service.call<{ id: number; recurring_gift_id: number; fund_id: null }>(
      'POST',
      '/api/v1/gifts?dry_run=true',
      { body },
    );
    expect(dry.status).toBe(201);
    expect(dry.body).toMatchObject({ id: 0, recurring_gift_id: recurring.id, fund_id: null });
    expect(await everything()).toEqual(before);
    const headers = { 'Idempotency-Key': 'payment-once' };
    const first = await service.call<{ id: number }>('POST', '/api/v1/gifts', { body, headers });
    const again = await service.call<{ id: number }>('POST', '/api/v1/gifts', { body, headers });
    expect(first.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(dry.body).toEqual({
      ...first.body,
      id: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await read(recurring.id)).toMatchObject({ gift_count: 1, total_given: 25 });
  });

  test('a paused recurring gift takes payments; a cancelled one keeps those it has', async () => {
    const recurring = await createRecurring({ status: 'paused' });
    const payment = await pay(recurring.id, 25, '2026-03-02');
    await patch(recurring.id, { status: 'cancelled' });
    const renamed = await service.call('PATCH', `/api/v1/gifts/${payment.id}`, {
      body: { subject: 'Last one', recurring_gift_id: recurring.id },
    });
    expect(renamed.status).toBe(200);
    expect(await read(recurring.id)).toMatchObject({
      status: 'cancelled',
      gift_count: 1,
      total_given: 25,
      next_expected_on: null,
    });
  });

  test('a payment link may be set, cleared and moved by PATCH', async () => {
    const a = await createRecurring();
    const b = await createRecurring();
    const gift = await pay(a.id, 10, '2026-03-05');
    const moved = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { recurring_gift_id: b.id },
    });
    expect(moved.body).toMatchObject({ recurring_gift_id: b.id });
    expect((await read(a.id)).gift_count).toBe(0);
    expect((await read(b.id)).gift_count).toBe(1);
    const cleared = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { recurring_gift_id: null },
    });
    expect(cleared.body).toMatchObject({ recurring_gift_id: null });
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT recurring_gift_id FROM gifts WHERE id = ${gift.id}`,
      ),
    ).toBeNull();
    expect((await read(b.id)).gift_count).toBe(0);
  });

  describe('refused payments: 422, the same dry, nothing written', () => {
    test('another donor’s recurring gift', async () => {
      const recurring = await createRecurring({ donor_id: ids.spouse });
      await expectSameErrorThreeWays(
        service,
        '/api/v1/gifts',
        'POST',
        {
          donor_id: ids.donor,
          amount: 5,
          subject: 'S',
          gift_date: '2026-03-01',
          recurring_gift_id: recurring.id,
        },
        invalid([{ param: 'recurring_gift_id', code: 'invalid_value' }]),
        everything,
      );
    });

    test('a cancelled recurring gift', async () => {
      const recurring = await createRecurring();
      await patch(recurring.id, { status: 'cancelled' });
      await expectSameErrorThreeWays(
        service,
        '/api/v1/gifts',
        'POST',
        {
          donor_id: ids.donor,
          amount: 5,
          subject: 'S',
          gift_date: '2026-03-01',
          recurring_gift_id: recurring.id,
        },
        invalid([{ param: 'recurring_gift_id', code: 'invalid_value' }]),
        everything,
      );
    });

    test.each([
      ['another institution’s', () => ids.otherRecurring],
      ['a missing', () => 999_999],
    ])('%s recurring gift is reference_not_found', async (_name, id) => {
      await expectSameErrorThreeWays(
        service,
        '/api/v1/gifts',
        'POST',
        () => ({
          donor_id: ids.donor,
          amount: 5,
          subject: 'S',
          gift_date: '2026-03-01',
          recurring_gift_id: id(),
        }),
        invalid([{ param: 'recurring_gift_id', code: 'reference_not_found' }]),
        everything,
      );
    });

    test('a PATCH that gives a payment to another donor', async () => {
      const recurring = await createRecurring();
      const gift = await pay(recurring.id, 10, '2026-03-05');
      await expectSameErrorThreeWays(
        service,
        `/api/v1/gifts/${gift.id}`,
        'PATCH',
        { donor_id: ids.spouse },
        invalid([{ param: 'recurring_gift_id', code: 'invalid_value' }]),
        everything,
      );
    });
  });
});

describe('lapsed, by the pinned day', () => {
  let donor = 0;
  const expected: Record<string, { lapsed: boolean; next: string | null }> = {};

  beforeAll(async () => {
    donor = await createDonor();
    const make = async (
      name: string,
      body: Record<string, unknown>,
      payments: string[] = [],
      status?: string,
    ) => {
      const recurring = await createRecurring({ donor_id: donor, ...body });
      for (const date of payments) await pay(recurring.id, 25, date, { donor_id: donor });
      if (status) await patch(recurring.id, { status });
      return recurring.id;
    };
    const cases: Array<
      [string, Record<string, unknown>, string[], string | undefined, boolean, string | null]
    > = [
      // Mar 1 and Mar 8 expected; Mar 15 is after Mar 8.
      [
        'weekly, two weeks behind',
        { frequency: 'weekly', start_on: '2026-03-01' },
        [],
        undefined,
        true,
        '2026-03-01',
      ],
      // Exactly one period late is not more than one period late.
      [
        'monthly, one period late to the day',
        { start_on: '2026-02-15' },
        [],
        undefined,
        false,
        '2026-02-15',
      ],
      ['monthly, a day more', { start_on: '2026-02-14' }, [], undefined, true, '2026-02-14'],
      [
        'monthly, paid up',
        { start_on: '2026-01-20' },
        ['2026-01-20', '2026-02-20'],
        undefined,
        false,
        '2026-03-20',
      ],
      [
        'quarterly from a month end',
        { frequency: 'quarterly', start_on: '2025-11-30' },
        [],
        undefined,
        true,
        '2025-11-30',
      ],
      ['starting later', { start_on: '2026-06-01' }, [], undefined, false, '2026-06-01'],
      ['paused, long behind', { start_on: '2025-01-01' }, [], 'paused', false, '2025-01-01'],
      ['cancelled, long behind', { start_on: '2025-01-01' }, [], 'cancelled', false, null],
    ];
    for (const [name, body, payments, status, lapsed, next] of cases) {
      const id = await make(name, body, payments, status);
      expected[id] = { lapsed, next };
    }
  });

  test('each answers lapsed and next_expected_on as the schedule says', async () => {
    const page = await service.call<Page<RecurringGift>>(
      'GET',
      `${path}?donor_id=${donor}&limit=100`,
    );
    expect(page.status).toBe(200);
    const answered = Object.fromEntries(
      page.body.data.map((row) => [row.id, { lapsed: row.lapsed, next: row.next_expected_on }]),
    );
    expect(answered).toEqual(expected);
  });

  test.each([true, false])('?lapsed=%s lists exactly those', async (lapsed) => {
    const page = await service.call<Page<RecurringGift>>(
      'GET',
      `${path}?donor_id=${donor}&lapsed=${lapsed}&limit=100`,
    );
    expect(page.status).toBe(200);
    const want = Object.entries(expected)
      .filter(([, value]) => value.lapsed === lapsed)
      .map(([id]) => Number(id))
      .sort((a, b) => b - a);
    expect(page.body.data.map((row) => row.id)).toEqual(want);
    for (const row of page.body.data) expect(row.lapsed).toBe(lapsed);
  });

  test('?lapsed takes only true or false', async () => {
    const response = await service.call<{ error: { code: string; param: string } }>(
      'GET',
      `${path}?lapsed=yes`,
    );
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'lapsed' });
  });
});

describe('lists and other institutions', () => {
  test('?status= and ?donor_id= filter; another institution’s donor gives an empty page', async () => {
    const donor = await createDonor();
    const active = await createRecurring({ donor_id: donor });
    const paused = await createRecurring({ donor_id: donor, status: 'paused' });
    const list = async (query: string) =>
      (await service.call<Page<RecurringGift>>('GET', `${path}?${query}`)).body.data.map(
        (row) => row.id,
      );
    expect(await list(`donor_id=${donor}`)).toEqual([paused.id, active.id]);
    expect(await list(`donor_id=${donor}&status=paused`)).toEqual([paused.id]);
    expect(await list(`donor_id=${ids.otherDonor}`)).toEqual([]);
    const mine = await list('limit=100');
    expect(mine).not.toContain(ids.otherRecurring);
  });

  test('another institution’s recurring gift is 404 to GET and PATCH, and unchanged', async () => {
    const get = await service.call('GET', `${path}/${ids.otherRecurring}`);
    expect(get.status).toBe(404);
    expect(get.body).toMatchObject({ error: { code: 'resource_not_found' } });
    await expectSameErrorThreeWays(
      service,
      `${path}/${ids.otherRecurring}`,
      'PATCH',
      { status: 'cancelled' },
      { status: 404, code: 'resource_not_found' },
      everything,
    );
  });

  test('a donor with a recurring gift cannot be deleted', async () => {
    const donor = await createDonor();
    await createRecurring({ donor_id: donor, status: 'paused' });
    const response = await service.call('DELETE', `/api/v1/donors/${donor}`);
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ error: { code: 'resource_in_use' } });
    expect(
      await service.db.oneFirst(sql.unsafe`SELECT count(*) FROM donors WHERE id = ${donor}`),
    ).toBe(1);
  });
});
