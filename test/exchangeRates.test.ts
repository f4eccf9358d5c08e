// Exchange rates (fundraising.md §2): the resource, and the lookup of the rate in effect on a date.
import { sql } from 'slonik';
import { findExchangeRate } from '../common/resources/exchangeRates/queries.js';
import { expectSameFailureThreeWays, fieldErrors } from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { waitFor } from './helpers/wait.js';

interface ExchangeRate {
  id: number;
  object: string;
  currency: string;
  rate: number;
  effective_on: string;
  source: string | null;
  created_at: string;
  updated_at: string;
}

interface Page {
  object: string;
  url: string;
  data: ExchangeRate[];
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
}

interface ErrorBody {
  error: { code: string; param?: string; message: string };
}

const path = '/api/v1/exchange-rates';

let service: TestService;
let other: Tenant;
/** Each rate of this file on its own day, so that no two collide by accident. */
let day = 0;
const nextDay = () => new Date(Date.UTC(2020, 0, 1 + ++day)).toISOString().slice(0, 10);

const createRate = (body: Record<string, unknown> = {}, key?: string) =>
  created<ExchangeRate>(
    service.call('POST', path, {
      key,
      body: { currency: 'EUR', rate: 1.08, effective_on: nextDay(), ...body },
    }),
  );

/** Every stored rate, of every institution, exactly as the database holds it, and its events. */
const rateRows = async () => ({
  rows: await service.db.any(sql.unsafe`
    SELECT id, institution_id, currency, rate::text AS rate, effective_on::text AS effective_on,
      source
    FROM exchange_rates ORDER BY id`),
  events: await service.db.oneFirst(
    sql.unsafe`SELECT count(*)::int FROM events WHERE object_type = 'exchange_rate'`,
  ),
});

/** Statements of this file's database waiting for a lock. */
const lockWaits = () =>
  service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);

const eventsOf = async (id: number) => {
  const events = await service.call<{ data: { type: string; data: { object: unknown } }[] }>(
    'GET',
    `/api/v1/events?object_type=exchange_rate&object_id=${id}`,
  );
  expect(events.status).toBe(200);
  return events.body.data;
};

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'GBP');
  // Held for the duplicate cases below.
  await createRate({ currency: 'CAD', effective_on: '2026-03-01', rate: 0.73 });
});

afterAll(async () => {
  await service?.close();
});

describe('POST /exchange-rates', () => {
  test('201 with the rate, a Location that answers, the stored row and one exchange_rate.created event', async () => {
    const response = await service.call<ExchangeRate>('POST', path, {
      body: { currency: 'JPY', rate: 0.0067, effective_on: '2026-01-01', source: '  ECB  ' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'exchange_rate',
      currency: 'JPY',
      rate: 0.0067,
      effective_on: '2026-01-01',
      source: 'ECB',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const location = `${path}/${response.body.id}`;
    expect(response.headers.get('Location')).toBe(location);
    const read = await service.call<ExchangeRate>('GET', location);
    expect([read.status, read.body]).toEqual([200, response.body]);
    expect(
      await service.db.one(sql.unsafe`
        SELECT institution_id, currency, rate::text AS rate, effective_on::text AS effective_on, source
        FROM exchange_rates WHERE id = ${response.body.id}`),
    ).toEqual({
      institution_id: service.tenant.institutionId,
      currency: 'JPY',
      rate: '0.006700',
      effective_on: '2026-01-01',
      source: 'ECB',
    });
    const events = await eventsOf(response.body.id);
    expect(events.map((event) => event.type)).toEqual(['exchange_rate.created']);
    expect(events[0]!.data.object).toEqual(response.body);
  });

  test('a rate keeps its exact value: 6 decimals, a large rate, an integer; source optional or null', async () => {
    for (const [rate, stored] of [
      [0.000001, '0.000001'],
      [123.456789, '123.456789'],
      [999999999.999999, '999999999.999999'],
      [25, '25.000000'],
    ] as const) {
      const made = await createRate({ currency: 'CHF', rate });
      expect(made).toMatchObject({ rate, source: null });
      expect(
        await service.db.oneFirst(
          sql.unsafe`SELECT rate::text FROM exchange_rates WHERE id = ${made.id}`,
        ),
      ).toBe(stored);
    }
    expect((await createRate({ source: null })).source).toBeNull();
    expect((await createRate({ source: '  ' })).source).toBeNull();
  });

  test('real, dry run and replay agree; the dry run answers id 0 and writes nothing, the replay one row', async () => {
    const body = { currency: 'AUD', rate: 0.65, effective_on: '2025-07-01', source: 'Treasury' };
    const before = await rateRows();
    for (const dryRun of [{ query: '?dry_run=true' }, { headers: { 'Dry-Run': 'true' } }]) {
      const dry = await service.call<ExchangeRate>('POST', `${path}${dryRun.query ?? ''}`, {
        body,
        headers: dryRun.headers,
      });
      expect(dry.status).toBe(201);
      expect(dry.headers.get('Location')).toBeNull();
      expect(await rateRows()).toEqual(before);
      const { id, created_at: createdAt, updated_at: updatedAt, ...rest } = dry.body;
      expect([id, createdAt, updatedAt]).toEqual([
        0,
        expect.stringMatching(ISO_MS),
        expect.stringMatching(ISO_MS),
      ]);
      expect(rest).toEqual({ object: 'exchange_rate', ...body });
    }
    const headers = { 'Idempotency-Key': 'exchange-rate-once' };
    const real = await service.call<ExchangeRate>('POST', path, { body, headers });
    const replay = await service.call<ExchangeRate>('POST', path, { body, headers });
    expect(real.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(real.body);
    expect(
      await service.db.anyFirst(sql.unsafe`SELECT id FROM exchange_rates WHERE currency = 'AUD'`),
    ).toEqual([real.body.id]);
    expect((await eventsOf(real.body.id)).map((event) => event.type)).toEqual([
      'exchange_rate.created',
    ]);
    const dry = await service.call<ExchangeRate>('POST', `${path}?dry_run=true`, {
      body: { ...body, effective_on: '2025-07-02' },
    });
    expect(dry.body).toEqual({
      ...real.body,
      id: 0,
      effective_on: '2025-07-02',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test('the same day of another currency, and the same currency and day in another institution, are free', async () => {
    await createRate({ currency: 'MXN', effective_on: '2026-03-01' });
    const theirs = await createRate({ currency: 'CAD', effective_on: '2026-03-01' }, other.key);
    expect(theirs.currency).toBe('CAD');
  });

  const good = { currency: 'EUR', rate: 1.08, effective_on: '2026-06-01' };
  test.each<[string, Record<string, unknown>, Array<{ param: string; code: string }>]>([
    [
      'the base currency',
      { ...good, currency: 'USD' },
      [{ param: 'currency', code: 'invalid_value' }],
    ],
    [
      'an unknown currency',
      { ...good, currency: 'XYZ' },
      [{ param: 'currency', code: 'invalid_value' }],
    ],
    [
      'a lower-case currency',
      { ...good, currency: 'eur' },
      [{ param: 'currency', code: 'invalid_value' }],
    ],
    [
      'a currency of 4 letters',
      { ...good, currency: 'EURO' },
      [{ param: 'currency', code: 'invalid_value' }],
    ],
    [
      'a currency as a number',
      { ...good, currency: 978 },
      [{ param: 'currency', code: 'invalid_type' }],
    ],
    [
      'currency missing',
      { ...good, currency: undefined },
      [{ param: 'currency', code: 'required' }],
    ],
    ['currency null', { ...good, currency: null }, [{ param: 'currency', code: 'required' }]],
    ['rate 0', { ...good, rate: 0 }, [{ param: 'rate', code: 'out_of_range' }]],
    ['a negative rate', { ...good, rate: -1.08 }, [{ param: 'rate', code: 'out_of_range' }]],
    [
      'a rate too large for the column',
      { ...good, rate: 1e12 },
      [{ param: 'rate', code: 'out_of_range' }],
    ],
    ['a rate of 1e21', { ...good, rate: 1e21 }, [{ param: 'rate', code: 'out_of_range' }]],
    [
      'a rate with 7 decimals',
      { ...good, rate: 1.0800001 },
      [{ param: 'rate', code: 'invalid_format' }],
    ],
    ['a rate of 1e-7', { ...good, rate: 0.0000001 }, [{ param: 'rate', code: 'invalid_format' }]],
    ['a rate as a string', { ...good, rate: '1.08' }, [{ param: 'rate', code: 'invalid_type' }]],
    ['rate missing', { ...good, rate: undefined }, [{ param: 'rate', code: 'required' }]],
    [
      'effective_on missing',
      { ...good, effective_on: undefined },
      [{ param: 'effective_on', code: 'required' }],
    ],
    [
      'effective_on not a real date',
      { ...good, effective_on: '2026-02-30' },
      [{ param: 'effective_on', code: 'invalid_format' }],
    ],
    [
      'effective_on as a timestamp',
      { ...good, effective_on: '2026-06-01T00:00:00Z' },
      [{ param: 'effective_on', code: 'invalid_format' }],
    ],
    [
      'a second rate for the same currency and day',
      { currency: 'CAD', rate: 0.74, effective_on: '2026-03-01' },
      [{ param: 'effective_on', code: 'already_in_use' }],
    ],
    [
      'source too long',
      { ...good, source: 'x'.repeat(101) },
      [{ param: 'source', code: 'too_long' }],
    ],
    ['source not text', { ...good, source: 7 }, [{ param: 'source', code: 'invalid_type' }]],
    ['a read-only field', { ...good, id: 5 }, [{ param: 'id', code: 'unknown_field' }]],
    ['an unknown field', { ...good, base: 'USD' }, [{ param: 'base', code: 'unknown_field' }]],
    [
      'everything wrong at once',
      { currency: 'USD', rate: 0, effective_on: 'soon', source: 'x'.repeat(101) },
      [
        { param: 'currency', code: 'invalid_value' },
        { param: 'rate', code: 'out_of_range' },
        { param: 'effective_on', code: 'invalid_format' },
        { param: 'source', code: 'too_long' },
      ],
    ],
  ])(
    '%s: 422 from the real call and both dry runs, nothing written',
    async (_name, body, expected) => {
      await expectSameFailureThreeWays(service, path, 'POST', body, expected, rateRows);
    },
  );

  test('the base currency’s message says its rate is always 1; another institution’s base is its own', async () => {
    const response = await service.call('POST', path, { body: { ...good, currency: 'USD' } });
    expect(response.status).toBe(422);
    const [problem] = (response.body as { error: { errors: { message: string }[] } }).error.errors;
    expect(problem!.message).toBe(
      'is the institution’s base currency (USD), whose rate is always 1',
    );
    // GBP is the other institution's base, not this one's; USD is a foreign currency to it.
    const before = await rateRows();
    const theirs = await service.call('POST', path, {
      key: other.key,
      body: { ...good, currency: 'GBP' },
    });
    expect([theirs.status, fieldErrors(theirs)]).toEqual([
      422,
      [{ param: 'currency', code: 'invalid_value' }],
    ]);
    expect(await rateRows()).toEqual(before);
    expect((await createRate({ currency: 'USD' }, other.key)).currency).toBe('USD');
    expect((await createRate({ currency: 'GBP' })).currency).toBe('GBP');
  });

  test('a rate of the same day committed after the check: the unique constraint answers 422 already_in_use', async () => {
    // Another write's insert, not yet committed when the create checks: the create's own insert
    // waits on it and then meets the unique constraint.
    let inserted!: () => void;
    let release!: () => void;
    const insertedNow = new Promise<void>((resolve) => (inserted = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = service.db.transaction(async (tx) => {
      await tx.query(sql.unsafe`
        INSERT INTO exchange_rates (institution_id, currency, rate, effective_on)
        VALUES (${service.tenant.institutionId}, 'HUF', 0.0028, '2026-04-02')`);
      inserted();
      await released;
    });
    await insertedNow;
    const answer = service.call('POST', path, {
      body: { currency: 'HUF', rate: 0.0029, effective_on: '2026-04-02' },
    });
    await waitFor(async () => (await lockWaits()) === 1, 10_000, 'the create waiting');
    release();
    await holding;
    const refused = await answer;
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused)).toEqual([{ param: 'effective_on', code: 'already_in_use' }]);
    expect(
      await service.db.anyFirst(
        sql.unsafe`SELECT rate::text FROM exchange_rates WHERE currency = 'HUF'`,
      ),
    ).toEqual(['0.002800']);
  });
});

describe('GET /exchange-rates', () => {
  test('newest first, paged both ways, filtered by currency (pinned in the cursor)', async () => {
    const made: ExchangeRate[] = [];
    for (let index = 0; index < 5; index++) made.push(await createRate({ currency: 'NOK' }));
    await createRate({ currency: 'DKK' });
    await createRate({ currency: 'NOK' }, other.key);
    const ids = made.map((rate) => rate.id).reverse();

    const first = await service.call<Page>('GET', `${path}?currency=NOK&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', url: path, has_more: true });
    expect(first.body.data).toEqual([made[4], made[3]]);
    const second = await service.call<Page>(
      'GET',
      `${path}?limit=2&starting_after=${first.body.next_cursor}`,
    );
    expect(second.body.data.map((rate) => rate.id)).toEqual(ids.slice(2, 4));
    const third = await service.call<Page>(
      'GET',
      `${path}?limit=2&starting_after=${second.body.next_cursor}`,
    );
    expect(third.body.data.map((rate) => rate.id)).toEqual(ids.slice(4));
    expect([third.body.has_more, third.body.next_cursor]).toEqual([false, null]);
    const back = await service.call<Page>(
      'GET',
      `${path}?limit=2&ending_before=${third.body.previous_cursor}`,
    );
    expect(back.body.data.map((rate) => rate.id)).toEqual(ids.slice(2, 4));

    const all = await service.call<Page>('GET', `${path}?limit=100`);
    const mine = await service.db.anyFirst(sql.unsafe`
      SELECT id FROM exchange_rates WHERE institution_id = ${service.tenant.institutionId}
      ORDER BY id DESC`);
    expect(all.body.data.map((rate) => rate.id)).toEqual(mine);
    expect(new Set(all.body.data.map((rate) => rate.currency)).has('DKK')).toBe(true);

    const none = await service.call<Page>('GET', `${path}?currency=ISK`);
    expect([none.status, none.body.data]).toEqual([200, []]);
  });

  test.each(['eur', 'XYZ', 'EURO', ''])('currency=%s is 400 invalid_parameter', async (value) => {
    const response = await service.call<ErrorBody>('GET', `${path}?currency=${value}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'currency' });
  });
});

describe('GET, DELETE and PATCH /exchange-rates/{id}', () => {
  test('another institution’s rate is as absent as a missing one, for GET and DELETE', async () => {
    const theirs = await createRate({}, other.key);
    for (const method of ['GET', 'DELETE'] as const) {
      const foreign = await service.call<ErrorBody>(method, `${path}/${theirs.id}`);
      const missing = await service.call<ErrorBody>(method, `${path}/999999999`);
      expect([foreign.status, missing.status]).toEqual([404, 404]);
      expect(foreign.body.error.code).toBe('resource_not_found');
      expect(foreign.body.error.message).toBe(missing.body.error.message);
    }
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM exchange_rates WHERE id = ${theirs.id}`,
      ),
    ).toBe(1);
  });

  test('DELETE: a dry run keeps the rate; the delete removes it, makes exchange_rate.deleted, and frees its day', async () => {
    const rate = await createRate({ currency: 'PLN', effective_on: '2026-05-01' });
    const dry = await service.call('DELETE', `${path}/${rate.id}?dry_run=true`);
    expect([dry.status, dry.body]).toEqual([
      200,
      { id: rate.id, object: 'exchange_rate', deleted: true },
    ]);
    expect((await service.call('GET', `${path}/${rate.id}`)).status).toBe(200);

    const response = await service.call('DELETE', `${path}/${rate.id}`);
    expect([response.status, response.body]).toEqual([
      200,
      { id: rate.id, object: 'exchange_rate', deleted: true },
    ]);
    expect((await service.call('GET', `${path}/${rate.id}`)).status).toBe(404);
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM exchange_rates WHERE id = ${rate.id}`,
      ),
    ).toBe(0);
    const events = await eventsOf(rate.id);
    expect(events.map((event) => event.type)).toEqual([
      'exchange_rate.deleted',
      'exchange_rate.created',
    ]);
    expect(events[0]!.data.object).toEqual(response.body);
    expect((await service.call('DELETE', `${path}/${rate.id}`)).status).toBe(404);
    // The correction the spec describes: delete, then post again for the same day.
    const corrected = await createRate({ currency: 'PLN', effective_on: '2026-05-01', rate: 0.26 });
    expect(corrected.rate).toBe(0.26);
  });

  test.each([
    ['PATCH', '/1', ['GET', 'DELETE']],
    ['PUT', '/1', ['GET', 'DELETE']],
    ['PATCH', '', ['GET', 'POST']],
    ['DELETE', '', ['GET', 'POST']],
  ])(
    '%s /exchange-rates%s answers 405 with an Allow header and changes nothing',
    async (method, tail, allowed) => {
      const rate = await createRate();
      const before = await rateRows();
      const target = `${path}${tail ? `/${rate.id}` : ''}`;
      const response = await service.call<ErrorBody>(method as 'PATCH', target, {
        body: { rate: 2 },
      });
      expect(response.status).toBe(405);
      expect(response.body.error.code).toBe('method_not_allowed');
      const allow = String(response.headers.get('Allow') ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== 'HEAD');
      expect(allow.sort()).toEqual([...allowed].sort());
      expect(await rateRows()).toEqual(before);
    },
  );
});

describe('findExchangeRate: the rate in effect on a date', () => {
  test('the latest with effective_on on or before the date; null before the first', async () => {
    const institution = service.tenant.institutionId;
    await createRate({ currency: 'BRL', effective_on: '2024-01-10', rate: 0.2 });
    await createRate({ currency: 'BRL', effective_on: '2024-03-01', rate: 0.19 });
    // Recorded after, but in effect earlier: the date decides, not the order of recording.
    await createRate({ currency: 'BRL', effective_on: '2024-02-01', rate: 0.195 });
    await createRate({ currency: 'BRL', effective_on: '2024-02-15', rate: 0.9 }, other.key);
    await createRate({ currency: 'ZAR', effective_on: '2024-01-01', rate: 0.05 });
    const on = (date: string, currency = 'BRL', id = institution) =>
      findExchangeRate(service.db, id, currency, date);
    expect(await on('2024-01-09')).toBeNull();
    expect(await on('2024-01-10')).toBe('0.200000');
    expect(await on('2024-01-31')).toBe('0.200000');
    expect(await on('2024-02-01')).toBe('0.195000');
    expect(await on('2024-02-20')).toBe('0.195000');
    expect(await on('2024-03-01')).toBe('0.190000');
    expect(await on('2030-12-31')).toBe('0.190000');
    expect(await on('2030-12-31', 'ISK')).toBeNull();
    expect(await on('2024-02-20', 'BRL', other.institutionId)).toBe('0.900000');
    expect(await on('2024-02-10', 'BRL', other.institutionId)).toBeNull();
  });
});

describe('the base currency is the institution’s as committed', () => {
  test('after PATCH /institution changes it, the new base is refused and the old one taken', async () => {
    // An institution of no money and no rate yet, whose currency may still change.
    const tenant = await service.createTenant('Rate Change College', 'USD');
    // The API now holds the key as confirmed, with the institution as it was before the change.
    expect((await service.call('GET', path, { key: tenant.key })).status).toBe(200);
    const changed = await service.call<{ currency: string }>('PATCH', '/api/v1/institution', {
      key: tenant.key,
      body: { currency: 'CHF' },
    });
    expect([changed.status, changed.body.currency]).toEqual([200, 'CHF']);
    const before = await rateRows();
    const refused = await service.call('POST', path, {
      key: tenant.key,
      body: { currency: 'CHF', rate: 1.1, effective_on: '2026-08-01' },
    });
    expect([refused.status, fieldErrors(refused)]).toEqual([
      422,
      [{ param: 'currency', code: 'invalid_value' }],
    ]);
    expect(await rateRows()).toEqual(before);
    const old = await createRate(
      { currency: 'USD', effective_on: '2026-08-01', rate: 1.2 },
      tenant.key,
    );
    expect(old.currency).toBe('USD');
    // Holding a rate, the base currency no longer changes.
    const fixed = await service.call('PATCH', '/api/v1/institution', {
      key: tenant.key,
      body: { currency: 'EUR' },
    });
    expect(fixed.status).toBe(409);
  });
});
