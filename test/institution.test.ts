// The institution's settings (fundraising.md §1): GET /institution and PATCH /institution.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { holdReceiptKey } from './helpers/rowLock.js';
import {
  expectSameErrorThreeWays,
  expectSameFailureThreeWays,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { waitFor } from './helpers/wait.js';

interface Institution {
  id: number;
  object: 'institution';
  name: string;
  currency: string;
  fiscal_year_start_month: number;
  consent_mode: 'opt_out' | 'opt_in';
  created_at: string;
}

interface Delivery {
  headers: IncomingHttpHeaders;
  event: { id: string; type: string; data: { object: { id: number } } };
}

let service: TestService;
let other: Tenant;
let receiver: Server;
const deliveries: Delivery[] = [];
let keys = 0;
const freshKey = () => `institution-${++keys}`;

const path = '/api/v1/institution';
const patch = (
  body: Record<string, unknown>,
  options: { key?: string; headers?: Record<string, string> } = {},
) => service.call<Institution>('PATCH', path, { body, ...options });
const read = async (key?: string) => (await service.call<Institution>('GET', path, { key })).body;

/** Both institutions as stored (with updated_at), and every event: what a refused write must leave. */
const snapshot = async () => ({
  institutions: await service.db.any(sql.unsafe`
    SELECT id, name, currency, fiscal_year_start_month, consent_mode, updated_at
    FROM institutions ORDER BY id`),
  events: await service.count('events'),
});

const institutionEvents = (institutionId: number) =>
  service.db.any(sql.unsafe`
    SELECT type, object_type, object_id, data, previous_attributes, request_id, api_key_id
    FROM events WHERE institution_id = ${institutionId} AND object_type = 'institution'
    ORDER BY created_at, id`);

/**
 * Statements of this file's database waiting for a lock, whose text matches `pattern` (several
 * writes wait at once, each on its own).
 */
const lockWaits = (pattern: string) =>
  service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE ${pattern}`);
/** A create in one statement with its receipt and event, as a gift's is (its text is long: the start). */
const giftStatement = '%admitted AS MATERIALIZED%';
const institutionLock = '%FROM institutions WHERE id = % FOR UPDATE%';
const receiptStore = '%write_receipts%';
/** A new institution of its own (USD), with a donor: for the currency rules. */
async function freshTenant(): Promise<Tenant & { donorId: number }> {
  const tenant = await service.createTenant(`College ${++keys}`, 'USD');
  const donor = await created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key: tenant.key,
      body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' },
      headers: { 'Idempotency-Key': freshKey() },
    }),
  );
  return { ...tenant, donorId: donor.id };
}

const giftOf = (donorId: number) => ({
  donor_id: donorId,
  amount: 25,
  subject: 'Annual fund',
  gift_date: '2026-03-15',
});

const pledgeOf = (donorId: number) => ({
  donor_id: donorId,
  amount: 100,
  pledge_date: '2026-03-01',
  schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-04-01' },
});

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({
        headers: request.headers,
        event: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Delivery['event'],
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  service = await startTestService({ WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}` });
  other = await service.createTenant('Other College', 'CAD');
  const endpoint = await service.call('POST', '/api/v1/webhook-endpoints', {
    body: { url: `http://127.0.0.1:${port}/hook`, enabled_events: ['institution.*'] },
  });
  expect(endpoint.status).toBe(201);
});

afterAll(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('GET /institution', () => {
  test('shows the settings with their defaults', async () => {
    const response = await service.call<Institution>('GET', path);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: service.tenant.institutionId,
      object: 'institution',
      name: 'Test University',
      currency: 'USD',
      fiscal_year_start_month: 1,
      consent_mode: 'opt_out',
      created_at: expect.stringMatching(ISO_MS),
    });
  });
});

describe('PATCH /institution', () => {
  test('changes each setting of the key’s institution only; GET answers the same', async () => {
    const theirs = await read(other.key);
    const before = await read();

    const month = await patch({ fiscal_year_start_month: 7 });
    expect(month.status).toBe(200);
    expect(month.body).toEqual({ ...before, fiscal_year_start_month: 7 });

    const mode = await patch({ consent_mode: 'opt_in' });
    expect(mode.status).toBe(200);
    expect(mode.body).toEqual({ ...before, fiscal_year_start_month: 7, consent_mode: 'opt_in' });

    const currency = await patch({ currency: 'EUR' });
    expect(currency.status).toBe(200);
    const after = {
      ...before,
      fiscal_year_start_month: 7,
      consent_mode: 'opt_in',
      currency: 'EUR',
    };
    expect(currency.body).toEqual(after);
    expect(await read()).toEqual(after);
    expect(
      await service.db.one(sql.unsafe`
        SELECT currency, fiscal_year_start_month, consent_mode FROM institutions
        WHERE id = ${service.tenant.institutionId}`),
    ).toEqual({ currency: 'EUR', fiscal_year_start_month: 7, consent_mode: 'opt_in' });
    // The other institution is as it was.
    expect(await read(other.key)).toEqual(theirs);

    const back = await patch({
      currency: 'USD',
      fiscal_year_start_month: 1,
      consent_mode: 'opt_out',
    });
    expect(back.body).toEqual(before);
  });

  test('every write makes one institution.updated event with its previous attributes, delivered to webhooks', async () => {
    const tenant = service.tenant;
    const before = await read();
    const events = (await institutionEvents(tenant.institutionId)).length;
    const response = await patch(
      { fiscal_year_start_month: 10 },
      { headers: { 'Idempotency-Key': freshKey() } },
    );
    expect(response.status).toBe(200);
    const made = (await institutionEvents(tenant.institutionId)).slice(events);
    expect(made).toEqual([
      {
        type: 'institution.updated',
        object_type: 'institution',
        object_id: tenant.institutionId,
        data: response.body,
        previous_attributes: { fiscal_year_start_month: before.fiscal_year_start_month },
        request_id: response.headers.get('Request-Id'),
        api_key_id: tenant.apiKeyId,
      },
    ]);
    // As GET /events answers it, filtered by type.
    const listed = await service.call<{ data: { id: string; type: string; data: unknown }[] }>(
      'GET',
      `/api/v1/events?type=institution.updated&object_type=institution&object_id=${tenant.institutionId}`,
    );
    expect(listed.status).toBe(200);
    const event = listed.body.data[0]!;
    expect(event).toMatchObject({
      type: 'institution.updated',
      data: { object: response.body, previous_attributes: { fiscal_year_start_month: 1 } },
    });
    await waitFor(
      () => deliveries.some((delivery) => delivery.event.id === event.id),
      15_000,
      'the event delivered',
    );
    const delivered = deliveries.filter((delivery) => delivery.event.id === event.id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.headers['webhook-id']).toBe(event.id);
    expect(delivered[0]!.event).toEqual(event);
    await patch({ fiscal_year_start_month: 1 });
  });

  test('an empty body changes nothing and is accepted, as other PATCHes', async () => {
    const before = await read();
    const response = await patch({});
    expect(response.status).toBe(200);
    expect(response.body).toEqual(before);
  });

  test('a dry run (either form) answers exactly what the real call then answers, and writes nothing', async () => {
    const body = { fiscal_year_start_month: 4, consent_mode: 'opt_in', currency: 'GBP' };
    const before = await snapshot();
    const dryQuery = await service.call<Institution>('PATCH', `${path}?dry_run=true`, { body });
    const dryHeader = await patch(body, { headers: { 'Dry-Run': 'true' } });
    expect(await snapshot()).toEqual(before);
    const real = await patch(body);
    expect(real.status).toBe(200);
    expect(dryQuery.status).toBe(200);
    expect(dryQuery.body).toEqual(real.body);
    expect(dryHeader.body).toEqual(real.body);
    await patch({ fiscal_year_start_month: 1, consent_mode: 'opt_out', currency: 'USD' });
  });

  test('a retry with the same Idempotency-Key replays the answer and writes once; another body is a mismatch', async () => {
    const key = freshKey();
    const events = await service.count('events');
    const first = await patch({ consent_mode: 'opt_in' }, { headers: { 'Idempotency-Key': key } });
    // Changed meanwhile: the replay still answers the first call's body.
    await patch({ consent_mode: 'opt_out' });
    const second = await patch({ consent_mode: 'opt_in' }, { headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect((await read()).consent_mode).toBe('opt_out');
    expect(await service.count('events')).toBe(events + 2);

    const before = await snapshot();
    const mismatch = await patch(
      { consent_mode: 'opt_out' },
      { headers: { 'Idempotency-Key': key } },
    );
    expect(mismatch.status).toBe(422);
    expect((mismatch.body as unknown as ErrorEnvelope).error).toMatchObject({
      type: 'idempotency_error',
      code: 'idempotency_key_request_mismatch',
    });
    expect(await snapshot()).toEqual(before);
  });

  const cases: Array<[string, Record<string, unknown>, Array<{ param: string; code: string }>]> = [
    [
      'month 0',
      { fiscal_year_start_month: 0 },
      [{ param: 'fiscal_year_start_month', code: 'out_of_range' }],
    ],
    [
      'month 13',
      { fiscal_year_start_month: 13 },
      [{ param: 'fiscal_year_start_month', code: 'out_of_range' }],
    ],
    [
      'month 1.5',
      { fiscal_year_start_month: 1.5 },
      [{ param: 'fiscal_year_start_month', code: 'out_of_range' }],
    ],
    [
      'month as a string',
      { fiscal_year_start_month: '7' },
      [{ param: 'fiscal_year_start_month', code: 'invalid_type' }],
    ],
    [
      'month null',
      { fiscal_year_start_month: null },
      [{ param: 'fiscal_year_start_month', code: 'invalid_type' }],
    ],
    [
      'consent_mode other',
      { consent_mode: 'opt_maybe' },
      [{ param: 'consent_mode', code: 'invalid_value' }],
    ],
    [
      'consent_mode null',
      { consent_mode: null },
      [{ param: 'consent_mode', code: 'invalid_type' }],
    ],
    ['currency in lower case', { currency: 'eur' }, [{ param: 'currency', code: 'invalid_value' }]],
    ['currency unknown', { currency: 'ABC' }, [{ param: 'currency', code: 'invalid_value' }]],
    ['currency a number', { currency: 978 }, [{ param: 'currency', code: 'invalid_type' }]],
    ['currency null', { currency: null }, [{ param: 'currency', code: 'invalid_type' }]],
    ['name (the operator’s)', { name: 'Renamed' }, [{ param: 'name', code: 'unknown_field' }]],
    ['an unknown field', { fiscal_year: 2027 }, [{ param: 'fiscal_year', code: 'unknown_field' }]],
    [
      'every problem at once, a valid field beside them',
      { fiscal_year_start_month: 13, consent_mode: 'yes', currency: 'EUR' },
      [
        { param: 'fiscal_year_start_month', code: 'out_of_range' },
        { param: 'consent_mode', code: 'invalid_value' },
      ],
    ],
  ];
  test.each(cases)(
    '%s: 422 the same three ways, and nothing changes',
    async (_name, body, expected) => {
      await expectSameFailureThreeWays(service, path, 'PATCH', body, expected, snapshot);
    },
  );
});

describe('the currency of an institution with money records', () => {
  test('changes while it has none; then a gift, a pledge, a recurring gift or an exchange rate fixes it (409 resource_in_use)', async () => {
    const creates: Array<[string, string, (donorId: number) => Record<string, unknown>]> = [
      ['gift', '/api/v1/gifts', giftOf],
      ['pledge', '/api/v1/pledges', pledgeOf],
      [
        'recurring gift',
        '/api/v1/recurring-gifts',
        (donorId) => ({
          donor_id: donorId,
          amount: 10,
          frequency: 'monthly',
          start_on: '2026-03-01',
        }),
      ],
      // A rate is stated in units of the base currency: another base would make it wrong.
      [
        'exchange rate',
        '/api/v1/exchange-rates',
        () => ({ currency: 'JPY', rate: 0.0061, effective_on: '2026-01-01' }),
      ],
    ];
    for (const [label, collection, body] of creates) {
      const tenant = await freshTenant();
      const changed = await patch({ currency: 'EUR' }, { key: tenant.key });
      expect({ label, status: changed.status, currency: changed.body.currency }).toEqual({
        label,
        status: 200,
        currency: 'EUR',
      });
      await created(
        service.call('POST', collection, { key: tenant.key, body: body(tenant.donorId) }),
      );

      await expectSameErrorThreeWays(
        service,
        path,
        'PATCH',
        { currency: 'GBP', consent_mode: 'opt_in' },
        { status: 409, code: 'resource_in_use' },
        snapshot,
        { key: tenant.key },
      );
      expect((await read(tenant.key)).currency).toBe('EUR');
      // Sending the currency it has is no change, and the other settings still change.
      const same = await patch({ currency: 'EUR', consent_mode: 'opt_in' }, { key: tenant.key });
      expect({ label, status: same.status, body: same.body }).toMatchObject({
        label,
        status: 200,
        body: { currency: 'EUR', consent_mode: 'opt_in' },
      });
    }
  });

  test('a pledge whose create is under way when the currency changes: the change waits for it, then is refused', async () => {
    // A gift commits in one statement, which takes its lock on the institution at its very end:
    // a pledge holds it from its insert to its commit, as every money record's create in a
    // transaction does.
    const tenant = await freshTenant();
    const key = freshKey();
    // The pledge has inserted its row and waits to store its receipt, nothing committed.
    const hold = await holdReceiptKey(service.db, tenant.institutionId, key);
    const pledge = service.call('POST', '/api/v1/pledges', {
      key: tenant.key,
      body: pledgeOf(tenant.donorId),
      headers: { 'Idempotency-Key': key },
    });
    await waitFor(async () => (await lockWaits(receiptStore)) === 1, 10_000, 'the pledge held');
    const change = patch({ currency: 'EUR' }, { key: tenant.key });
    // The change waits on the pledge's lock: answered now, it did not.
    const early = await Promise.race([
      change.then(() => 'answered' as const),
      waitFor(async () => (await lockWaits(institutionLock)) === 1, 10_000, 'the change waiting'),
    ]);
    await hold.release();
    const [made, refused] = await Promise.all([pledge, change]);
    expect({ early, pledge: made.status, change: refused.status }).toEqual({
      early: undefined,
      pledge: 201,
      change: 409,
    });
    expect((refused.body as unknown as ErrorEnvelope).error.code).toBe('resource_in_use');
    expect((await read(tenant.key)).currency).toBe('USD');
  });

  test('a gift created while the currency change is under way waits for it, and is in the new currency', async () => {
    const tenant = await freshTenant();
    const key = freshKey();
    // The change has locked the institution, checked and updated it, and waits to store its
    // receipt, nothing committed.
    const hold = await holdReceiptKey(service.db, tenant.institutionId, key, {
      lockInstitution: false,
    });
    const change = patch(
      { currency: 'EUR' },
      { key: tenant.key, headers: { 'Idempotency-Key': key } },
    );
    await waitFor(async () => (await lockWaits(receiptStore)) === 1, 10_000, 'the change held');
    // Sent no currency, it takes the base currency as committed when it commits, not the one
    // the API knew when it was queued.
    const gift = service.call<{ id: number }>('POST', '/api/v1/gifts', {
      key: tenant.key,
      body: giftOf(tenant.donorId),
    });
    // The gift waits on the change's lock: answered (committed) now, it did not.
    const early = await Promise.race([
      gift.then(() => 'answered' as const),
      waitFor(async () => (await lockWaits(giftStatement)) === 1, 10_000, 'the gift waiting'),
    ]);
    expect(await service.count('gifts', tenant.institutionId)).toBe(0);
    await hold.release();
    const [changed, made] = await Promise.all([change, gift]);
    expect({ early, change: changed.status, gift: made.status }).toEqual({
      early: undefined,
      change: 200,
      gift: 201,
    });
    expect((await read(tenant.key)).currency).toBe('EUR');
    const stored = await service.db.one(sql.unsafe`
      SELECT currency, exchange_rate::text, base_amount::text FROM gifts
      WHERE id = ${made.body.id}`);
    expect(stored).toEqual({ currency: 'EUR', exchange_rate: '1.000000', base_amount: '25.00' });
  });
});

describe('a currency change and the keys an API process holds as confirmed', () => {
  // Long enough that a key the API confirmed is not read again during the test unless it is told.
  let cached: TestService;
  beforeAll(async () => {
    cached = await startTestService({ API_KEY_CACHE_SECONDS: '300' });
  });
  afterAll(async () => {
    await cached?.close();
  });

  test('a gift created after the change defaults to the new currency, not the one the API held', async () => {
    const donor = await created<{ id: number }>(
      cached.call('POST', '/api/v1/donors', {
        body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' },
        headers: { 'Idempotency-Key': freshKey() },
      }),
    );
    const gift = {
      donor_id: donor.id,
      amount: 25,
      subject: 'Annual fund',
      gift_date: '2026-03-15',
    };
    const preview = () =>
      cached.call<{ currency: string }>('POST', '/api/v1/gifts?dry_run=true', { body: gift });
    // The API now holds the key as confirmed, with its institution's currency.
    expect((await preview()).body.currency).toBe('USD');

    const changed = await cached.call<{ currency: string }>('PATCH', '/api/v1/institution', {
      body: { currency: 'EUR' },
    });
    expect(changed.status).toBe(200);
    // The change is announced when it commits, as a revocation is: heard within moments.
    await waitFor(
      async () => (await preview()).body.currency === 'EUR',
      2_000,
      'the dry run to default to the new currency',
    );
    const institution = await cached.call<{ currency: string }>('GET', '/api/v1/institution');
    expect(institution.body.currency).toBe('EUR');
    const real = await created<{ id: number; currency: string }>(
      cached.call('POST', '/api/v1/gifts', {
        body: gift,
        headers: { 'Idempotency-Key': freshKey() },
      }),
    );
    expect(real.currency).toBe('EUR');
    expect(
      await cached.db.oneFirst(
        sql.unsafe`SELECT currency FROM gifts WHERE institution_id = ${cached.tenant.institutionId} AND id = ${real.id}`,
      ),
    ).toBe('EUR');
  });
});
