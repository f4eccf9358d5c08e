// Receipts (giving.md §4): issue, list, retrieve and void, their rules, and gap-free numbers.
import { sql } from 'slonik';
import { z } from 'zod';
import { insertApiKey } from '../common/institutions.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import {
  expectSameErrorThreeWays,
  expectSameFailureThreeWays,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { waitFor } from './helpers/wait.js';

interface Receipt {
  id: number;
  object: 'receipt';
  number: number;
  gift_id: number;
  donor_id: number;
  issued_on: string;
  amount: number;
  benefit_amount: number;
  deductible_amount: number;
  currency: string;
  status: 'issued' | 'void';
  donor_name: string;
  donor_address: Record<string, string | null> | null;
  void_reason: string | null;
  voided_at: string | null;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

type Json = Record<string, unknown>;

const storedReceipt = z.object({
  id: z.number(),
  number: z.number(),
  gift_id: z.number(),
  status: z.string(),
  void_reason: z.string().nullable(),
  voided: z.boolean(),
});

let service: TestService;
let counter = 0;

const address = {
  line1: '14 Beacon Street',
  city: 'Boston',
  region: 'MA',
  postal_code: '02108',
  country: 'US',
};
const presentedAddress = { ...address, line2: null };

/** A client of its own institution, so that its receipt numbers start at 1. */
const institution = async (name = `Receipting College ${++counter}`) =>
  clientOf(await service.createTenant(name, 'USD'));

/** A client of the tenant with a donor of its own and a way to give gifts and issue receipts. */
async function clientOf(tenant: Tenant) {
  const post = <T>(path: string, body: Json, headers: Record<string, string> = {}) =>
    service.call<T>('POST', `/api/v1${path}`, { key: tenant.key, body, headers });
  const donor = await created<{ id: number }>(
    post('/donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada${++counter}@example.org`,
      address,
    }),
  );
  const gift = (body: Json = {}) =>
    created<{ id: number }>(
      post('/gifts', {
        donor_id: donor.id,
        amount: 250,
        subject: 'Annual fund',
        gift_date: '2026-03-01',
        ...body,
      }),
    );
  const issue = (body: Json, headers: Record<string, string> = {}) =>
    post<Receipt>('/receipts', body, headers);
  const get = <T>(path: string) => service.call<T>('GET', `/api/v1${path}`, { key: tenant.key });
  return { tenant, donor, gift, issue, post, get };
}

/** Every receipt of an institution and its counter, as stored. */
const stored = async (tenant: Pick<Tenant, 'institutionId'>) => ({
  receipts: await service.db.any(sql.type(storedReceipt)`
    SELECT id, number, gift_id, status, void_reason, voided_at IS NOT NULL AS voided
    FROM receipts WHERE institution_id = ${tenant.institutionId} ORDER BY number`),
  last: await service.db.maybeOneFirst(sql.unsafe`
    SELECT last_number FROM receipt_numbers WHERE institution_id = ${tenant.institutionId}`),
});

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

describe('POST /receipts', () => {
  test('issues receipt 1: 201, Location, the gift’s money and the donor’s name and address; GET and the list answer the same', async () => {
    const { tenant, donor, gift, issue, get } = await institution();
    const { id: giftId } = await gift({ amount: 250.5, benefit_amount: 40 });
    const response = await issue({ gift_id: giftId, issued_on: '2026-03-02' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'receipt',
      number: 1,
      gift_id: giftId,
      donor_id: donor.id,
      issued_on: '2026-03-02',
      amount: 250.5,
      benefit_amount: 40,
      deductible_amount: 210.5,
      currency: 'USD',
      status: 'issued',
      donor_name: 'Ada Lovelace',
      donor_address: presentedAddress,
      void_reason: null,
      voided_at: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(response.headers.get('Location')).toBe(`/api/v1/receipts/${response.body.id}`);
    const read = await get<Receipt>(`/receipts/${response.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    const list = await get<Page<Receipt>>('/receipts');
    expect(list.body.data).toEqual([response.body]);
    expect(await stored(tenant)).toEqual({
      receipts: [
        {
          id: response.body.id,
          number: 1,
          gift_id: giftId,
          status: 'issued',
          void_reason: null,
          voided: false,
        },
      ],
      last: 1,
    });
    const row = await service.db.one(sql.unsafe`
      SELECT amount::text, benefit_amount::text, deductible_amount::text, donor_address
      FROM receipts WHERE id = ${response.body.id}`);
    expect(row).toEqual({
      amount: '250.50',
      benefit_amount: '40.00',
      deductible_amount: '210.50',
      donor_address: presentedAddress,
    });
  });

  test('numbers follow one another per institution, each institution from 1', async () => {
    const first = await institution();
    const second = await institution();
    const numbers: number[] = [];
    for (const client of [first, first, second, first, second]) {
      const { id } = await client.gift();
      numbers.push((await created(client.issue({ gift_id: id }))).number);
    }
    expect(numbers).toEqual([1, 2, 1, 3, 2]);
  });

  test('issued_on defaults to today in UTC', async () => {
    const { gift, issue } = await institution();
    const { id } = await gift();
    const before = new Date().toISOString().slice(0, 10);
    const receipt = await created(issue({ gift_id: id }));
    const after = new Date().toISOString().slice(0, 10);
    expect([before, after]).toContain(receipt.issued_on);
  });

  test('amount is the gift’s net amount; a benefit above it leaves nothing deductible', async () => {
    const { gift, issue, post } = await institution();
    const refund = async (giftId: number, amount: number) =>
      expect(
        (await post(`/gifts/${giftId}/refunds`, { amount, refund_date: '2026-03-05' })).status,
      ).toBe(201);
    const { id } = await gift({ amount: 100, benefit_amount: 30 });
    await refund(id, 80);
    const receipt = await created(issue({ gift_id: id }));
    expect(receipt).toMatchObject({ amount: 20, benefit_amount: 30, deductible_amount: 0 });
    const partly = await gift({ amount: 100, benefit_amount: 30 });
    await refund(partly.id, 25.25);
    expect(await created(issue({ gift_id: partly.id }))).toMatchObject({
      amount: 74.75,
      benefit_amount: 30,
      deductible_amount: 44.75,
    });
  });

  test('a donor without an address is receipted with donor_address null; an organization by its name', async () => {
    const { tenant, post, issue } = await institution();
    const org = await created<{ id: number }>(
      post('/donors', {
        role: 'Foundation',
        organization_name: 'Hartley Foundation',
        email: `hartley${++counter}@example.org`,
      }),
    );
    const gift = await created<{ id: number }>(
      post('/gifts', { donor_id: org.id, amount: 5000, subject: 'Grant', gift_date: '2026-01-05' }),
    );
    expect(await created(issue({ gift_id: gift.id }))).toMatchObject({
      donor_id: org.id,
      donor_name: 'Hartley Foundation',
      donor_address: null,
    });
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT donor_address IS NULL FROM receipts WHERE institution_id = ${tenant.institutionId}`,
      ),
    ).toBe(true);
  });

  test('the donor’s name and address are frozen: a later change of the donor changes no receipt', async () => {
    const { donor, gift, issue, get, tenant } = await institution();
    const { id } = await gift();
    const receipt = await created(issue({ gift_id: id }));
    const patched = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
      key: tenant.key,
      body: { last_name: 'King', address: { line1: '1 New Road', city: 'Leeds', country: 'GB' } },
    });
    expect(patched.status).toBe(200);
    const read = await get<Receipt>(`/receipts/${receipt.id}`);
    expect(read.body).toEqual(receipt);
    expect(read.body.donor_name).toBe('Ada Lovelace');
    expect(read.body.donor_address).toEqual(presentedAddress);
    // The next receipt of the same donor states the donor as they are now.
    const next = await created(issue({ gift_id: (await gift()).id }));
    expect(next).toMatchObject({
      donor_name: 'Ada King',
      donor_address: {
        line1: '1 New Road',
        line2: null,
        city: 'Leeds',
        region: null,
        postal_code: null,
        country: 'GB',
      },
    });
  });

  test('a dry run answers what the real call would, with number 0 and id 0, and writes nothing, not even a number', async () => {
    const { tenant, donor, gift, issue } = await institution();
    await created(issue({ gift_id: (await gift()).id }));
    const { id } = await gift({ amount: 75 });
    const before = await stored(tenant);
    const switches: [string, Record<string, string>][] = [
      ['/api/v1/receipts', { 'Dry-Run': 'true' }],
      ['/api/v1/receipts?dry_run=true', {}],
    ];
    for (const [path, headers] of switches) {
      const dry = await service.call<Receipt>('POST', path, {
        key: tenant.key,
        body: { gift_id: id, issued_on: '2026-04-01' },
        headers,
      });
      expect(dry.status).toBe(201);
      expect(dry.headers.get('Location')).toBeNull();
      expect(dry.body).toEqual({
        id: 0,
        object: 'receipt',
        number: 0,
        gift_id: id,
        donor_id: donor.id,
        issued_on: '2026-04-01',
        amount: 75,
        benefit_amount: 0,
        deductible_amount: 75,
        currency: 'USD',
        status: 'issued',
        donor_name: 'Ada Lovelace',
        donor_address: presentedAddress,
        void_reason: null,
        voided_at: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
    }
    expect(await stored(tenant)).toEqual(before);
    const real = await created(issue({ gift_id: id, issued_on: '2026-04-01' }));
    expect(real.number).toBe(2);
  });

  test('a retry with the same Idempotency-Key replays the receipt and takes no second number', async () => {
    const { tenant, gift, issue } = await institution();
    const { id } = await gift();
    const headers = { 'Idempotency-Key': `receipt-once-${id}` };
    const first = await issue({ gift_id: id }, headers);
    const second = await issue({ gift_id: id }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.headers.get('Location')).toBe(`/api/v1/receipts/${first.body.id}`);
    const after = await stored(tenant);
    expect(after.receipts).toHaveLength(1);
    expect(after.last).toBe(1);
    expect((await created(issue({ gift_id: (await gift()).id }))).number).toBe(2);
  });
});

describe('POST /receipts refused: the same answer real and dry, nothing written, no number taken', () => {
  let donorId: number;
  const snapshot = () => stored(service.tenant);
  const gift = async (body: Json = {}) =>
    (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/gifts', {
          body: {
            donor_id: donorId,
            amount: 80,
            subject: 'Refusals',
            gift_date: '2026-05-10',
            ...body,
          },
        }),
      )
    ).id;
  const refused = (body: Json, errors: { param: string; code: string }[]) =>
    expectSameFailureThreeWays(service, '/api/v1/receipts', 'POST', body, errors, snapshot);

  beforeAll(async () => {
    donorId = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          body: { role: 'Individual', first_name: 'R', last_name: 'F', email: 'rf@example.org' },
        }),
      )
    ).id;
    // One issued receipt, so that a taken number would show as a gap after it.
    await created(service.call('POST', '/api/v1/receipts', { body: { gift_id: await gift() } }));
  });

  test.each<[string, Json, { param: string; code: string }[]]>([
    ['no gift_id', {}, [{ param: 'gift_id', code: 'required' }]],
    ['gift_id null', { gift_id: null }, [{ param: 'gift_id', code: 'required' }]],
    ['gift_id a string', { gift_id: '1' }, [{ param: 'gift_id', code: 'invalid_type' }]],
    ['gift_id 0', { gift_id: 0 }, [{ param: 'gift_id', code: 'out_of_range' }]],
    [
      'a gift that does not exist',
      { gift_id: 999999 },
      [{ param: 'gift_id', code: 'reference_not_found' }],
    ],
    [
      'issued_on not a real date, and an unknown field',
      { gift_id: 999999, issued_on: '2026-02-30', number: 7 },
      [
        { param: 'issued_on', code: 'invalid_format' },
        { param: 'number', code: 'unknown_field' },
        { param: 'gift_id', code: 'reference_not_found' },
      ],
    ],
    [
      'issued_on null',
      { gift_id: 999999, issued_on: null },
      [
        { param: 'issued_on', code: 'invalid_type' },
        { param: 'gift_id', code: 'reference_not_found' },
      ],
    ],
  ])('%s', async (_name, body, errors) => {
    await refused(body, errors);
  });

  test('another institution’s gift is reference_not_found, as a missing one', async () => {
    const other = await institution('Other College');
    const { id } = await other.gift();
    await refused({ gift_id: id }, [{ param: 'gift_id', code: 'reference_not_found' }]);
    expect(await stored(other.tenant)).toEqual({ receipts: [], last: null });
  });

  test('issued_on before the gift’s date is out_of_range', async () => {
    const id = await gift();
    await refused({ gift_id: id, issued_on: '2026-05-09' }, [
      { param: 'issued_on', code: 'out_of_range' },
    ]);
  });

  test('a voided gift is invalid_value', async () => {
    const id = await gift();
    const voided = await service.call('POST', `/api/v1/gifts/${id}/void`, {
      body: { reason: 'Entered twice' },
    });
    expect(voided.status).toBe(200);
    await refused({ gift_id: id }, [{ param: 'gift_id', code: 'invalid_value' }]);
  });

  test('a gift refunded in full is invalid_value', async () => {
    const id = await gift();
    const refunded = await service.call('POST', `/api/v1/gifts/${id}/refunds`, {
      body: { amount: 80, refund_date: '2026-05-11' },
    });
    expect(refunded.status).toBe(201);
    await refused({ gift_id: id }, [{ param: 'gift_id', code: 'invalid_value' }]);
  });

  test('a gift with an issued receipt is already_in_use, with an issued_on problem listed too', async () => {
    const id = await gift();
    const first = await created<Receipt>(
      service.call('POST', '/api/v1/receipts', { body: { gift_id: id } }),
    );
    await refused({ gift_id: id }, [{ param: 'gift_id', code: 'already_in_use' }]);
    await refused({ gift_id: id, issued_on: '2026-01-01' }, [
      { param: 'gift_id', code: 'already_in_use' },
      { param: 'issued_on', code: 'out_of_range' },
    ]);
    expect(first.number).toBe(2);
  });

  test('after all of these, the numbers taken are exactly those of the receipts issued', async () => {
    const next = await created<Receipt>(
      service.call('POST', '/api/v1/receipts', { body: { gift_id: await gift() } }),
    );
    const { receipts, last } = await snapshot();
    expect(receipts.map((receipt) => receipt.number)).toEqual(
      Array.from({ length: receipts.length }, (_, index) => index + 1),
    );
    expect(last).toBe(next.number);
    expect(next.number).toBe(receipts.length);
  });
});

describe('POST /receipts/{id}/void', () => {
  test('voids an issued receipt: 200 with it, status void, reason and time; a second void is 409; the number stays used and a re-issue takes the next', async () => {
    const { tenant, gift, issue, post, get } = await institution();
    const { id: giftId } = await gift();
    const receipt = await created(issue({ gift_id: giftId }));
    const voided = await post<Receipt>(`/receipts/${receipt.id}/void`, {
      reason: '  Wrong address  ',
    });
    expect(voided.status).toBe(200);
    expect(voided.headers.get('Location')).toBeNull();
    expect(voided.body).toEqual({
      ...receipt,
      status: 'void',
      void_reason: 'Wrong address',
      voided_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await get<Receipt>(`/receipts/${receipt.id}`)).body).toEqual(voided.body);

    const again = await post(`/receipts/${receipt.id}/void`, { reason: 'Twice' });
    expect(again.status).toBe(409);
    expect((again.body as unknown as ErrorEnvelope).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_state_transition',
      param: 'status',
    });

    const reissued = await created(issue({ gift_id: giftId }));
    expect(reissued.number).toBe(2);
    expect(reissued.id).not.toBe(receipt.id);
    expect(await stored(tenant)).toEqual({
      receipts: [
        {
          id: receipt.id,
          number: 1,
          gift_id: giftId,
          status: 'void',
          void_reason: 'Wrong address',
          voided: true,
        },
        {
          id: reissued.id,
          number: 2,
          gift_id: giftId,
          status: 'issued',
          void_reason: null,
          voided: false,
        },
      ],
      last: 2,
    });
  });

  test('a dry run answers the voided receipt and changes nothing', async () => {
    const { tenant, gift, issue } = await institution();
    const receipt = await created(issue({ gift_id: (await gift()).id }));
    const before = await stored(tenant);
    const dry = await service.call<Receipt>(
      'POST',
      `/api/v1/receipts/${receipt.id}/void?dry_run=true`,
      { key: tenant.key, body: { reason: 'Preview' } },
    );
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...receipt,
      status: 'void',
      void_reason: 'Preview',
      voided_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await stored(tenant)).toEqual(before);
  });

  test('refusals: no reason (422), an unknown receipt or another institution’s (404), a void one (409); nothing changes', async () => {
    const client = await clientOf(service.tenant);
    const mine = await created(client.issue({ gift_id: (await client.gift()).id }));
    const snapshot = () => stored(service.tenant);
    const path = `/api/v1/receipts/${mine.id}/void`;
    for (const [body, errors] of [
      [{}, [{ param: 'reason', code: 'required' }]],
      [{ reason: '   ' }, [{ param: 'reason', code: 'required' }]],
      [{ reason: 'x'.repeat(501) }, [{ param: 'reason', code: 'too_long' }]],
      [{ reason: 'ok', status: 'issued' }, [{ param: 'status', code: 'unknown_field' }]],
    ] as [Json, { param: string; code: string }[]][])
      await expectSameFailureThreeWays(service, path, 'POST', body, errors, snapshot);
    await expectSameErrorThreeWays(
      service,
      '/api/v1/receipts/999999/void',
      'POST',
      { reason: 'x' },
      { status: 404, code: 'resource_not_found' },
      snapshot,
    );
    // Another institution's receipt is as absent as a missing one.
    const other = await institution();
    const theirs = await created(other.issue({ gift_id: (await other.gift()).id }));
    await expectSameErrorThreeWays(
      service,
      `/api/v1/receipts/${theirs.id}/void`,
      'POST',
      { reason: 'x' },
      { status: 404, code: 'resource_not_found' },
      () => Promise.all([stored(service.tenant), stored(other.tenant)]),
    );
    expect((await service.call(`GET`, `/api/v1/receipts/${theirs.id}`)).status).toBe(404);
    const voided = await service.call('POST', path, { body: { reason: 'first' } });
    expect(voided.status).toBe(200);
    await expectSameErrorThreeWays(
      service,
      path,
      'POST',
      { reason: 'second' },
      { status: 409, code: 'invalid_state_transition' },
      snapshot,
    );
  });

  test('receipts have no PATCH and no DELETE', async () => {
    const { tenant, gift, issue } = await institution();
    const receipt = await created(issue({ gift_id: (await gift()).id }));
    for (const method of ['PATCH', 'DELETE']) {
      const response = await service.call(method, `/api/v1/receipts/${receipt.id}`, {
        key: tenant.key,
        ...(method === 'PATCH' ? { body: { issued_on: '2026-06-01' } } : {}),
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('Allow')).toBe('GET');
    }
    expect((await stored(tenant)).receipts).toHaveLength(1);
  });
});

describe('a rolled-back issue takes no number', () => {
  test('an issue whose transaction rolls back after taking its number (its API key revoked meanwhile) leaves no gap', async () => {
    const { tenant, gift, issue } = await institution();
    const first = await created(issue({ gift_id: (await gift()).id }));
    const { id: giftId } = await gift();
    const second = await service.db.transaction((db) => insertApiKey(db, tenant.institutionId));
    expect((await service.call('GET', '/api/v1/institution', { key: second.key })).status).toBe(
      200,
    );

    // The test holds the gift's row, so the worker's issue waits inside its transaction; the
    // key is revoked meanwhile. Released, the issue takes its number and inserts the receipt,
    // then its commit is refused for the key, and everything rolls back.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const hold = service.db.transaction(async (db) => {
      await db.query(sql.unsafe`SELECT id FROM gifts WHERE id = ${giftId} FOR UPDATE`);
      locked();
      await held;
    });
    await isLocked;
    const pending = service.call('POST', '/api/v1/receipts', {
      key: second.key,
      body: { gift_id: giftId },
    });
    await waitFor(
      async () =>
        Number(
          await service.db.oneFirst(sql.unsafe`
            SELECT count(*)::int FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`),
        ) > 0,
      5_000,
      'the issue to wait for the gift row',
    );
    await service.db.query(
      sql.unsafe`UPDATE api_keys SET revoked_at = now() WHERE id = ${second.id}`,
    );
    release();
    await hold;
    const refused = await pending;
    expect(refused.status).toBe(401);
    expect((refused.body as unknown as ErrorEnvelope).error.code).toBe('invalid_api_key');
    expect(await stored(tenant)).toMatchObject({ last: 1 });
    expect((await stored(tenant)).receipts).toHaveLength(1);

    const next = await created(issue({ gift_id: giftId }));
    expect(next.number).toBe(2);
    // The refused issue did insert its receipt before the rollback: the id it drew from the
    // identity (which, unlike the number, is not given back) is missing between the two.
    expect(next.id).toBe(first.id + 2);
  });
});

describe('GET /receipts', () => {
  test('filters by donor, gift, status and issue dates, and pages with a cursor that keeps them', async () => {
    const { tenant, donor, gift, issue, post, get } = await institution();
    const otherDonor = await created<{ id: number }>(
      post('/donors', {
        role: 'Individual',
        first_name: 'Bo',
        last_name: 'Other',
        email: `bo${++counter}@example.org`,
      }),
    );
    const receipts: Receipt[] = [];
    for (let day = 1; day <= 7; day += 1) {
      const { id } = await gift();
      receipts.push(await created(issue({ gift_id: id, issued_on: `2026-06-0${day}` })));
    }
    const foreign = await created<{ id: number }>(
      post('/gifts', {
        donor_id: otherDonor.id,
        amount: 5,
        subject: 'Other donor',
        gift_date: '2026-03-01',
      }),
    );
    const otherReceipt = await created(issue({ gift_id: foreign.id, issued_on: '2026-06-03' }));
    const voided = await post<Receipt>(`/receipts/${receipts[2]!.id}/void`, { reason: 'Redo' });
    expect(voided.status).toBe(200);
    receipts[2] = voided.body;
    const ids = (page: Page<Receipt>) => page.data.map((receipt) => receipt.id);

    const all = await get<Page<Receipt>>('/receipts');
    expect(ids(all.body)).toEqual([otherReceipt.id, ...receipts.map((r) => r.id).reverse()]);
    expect(all.body.data[1]).toEqual(receipts[6]);

    const byDonor = await get<Page<Receipt>>(`/receipts?donor_id=${otherDonor.id}`);
    expect(ids(byDonor.body)).toEqual([otherReceipt.id]);
    const byGift = await get<Page<Receipt>>(`/receipts?gift_id=${receipts[1]!.gift_id}`);
    expect(ids(byGift.body)).toEqual([receipts[1]!.id]);
    const byStatus = await get<Page<Receipt>>('/receipts?status=void');
    expect(ids(byStatus.body)).toEqual([receipts[2]!.id]);
    const byDates = await get<Page<Receipt>>(
      '/receipts?issued_from=2026-06-03&issued_to=2026-06-05',
    );
    expect(ids(byDates.body)).toEqual([
      otherReceipt.id,
      receipts[4]!.id,
      receipts[3]!.id,
      receipts[2]!.id,
    ]);
    const bad = await get('/receipts?status=draft');
    expect(bad.status).toBe(400);
    expect((bad.body as unknown as ErrorEnvelope).error).toMatchObject({
      code: 'invalid_parameter',
      param: 'status',
    });
    const badDate = await get('/receipts?issued_from=2026-13-01');
    expect(badDate.status).toBe(400);

    // Issued receipts of the first donor from June 2 on, two a page.
    const seen: number[] = [];
    let path = `/receipts?donor_id=${donor.id}&status=issued&issued_from=2026-06-02&limit=2`;
    for (;;) {
      const page = await get<Page<Receipt>>(path);
      expect(page.status).toBe(200);
      seen.push(...ids(page.body));
      if (!page.body.has_more) break;
      path = `/receipts?limit=2&starting_after=${encodeURIComponent(page.body.next_cursor!)}`;
    }
    expect(seen).toEqual([6, 5, 4, 3, 1].map((index) => receipts[index]!.id));
    // Another institution sees none of them.
    const other = await institution();
    expect((await other.get<Page<Receipt>>('/receipts')).body.data).toEqual([]);
    expect(tenant.institutionId).not.toBe(other.tenant.institutionId);
  });
});
