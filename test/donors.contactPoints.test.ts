// Contact points beyond the primary ones (constituents.md §3): emails, phones and addresses on
// donors, their rules, PATCH replacing a whole list, and mailing_address by the one clock.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { pinToday } from '../common/clock.js';
import { startTestService, type TestService } from './helpers/harness.js';
import type { Donor } from './helpers/donors.js';
import { rowErrors, settled, upload } from './helpers/imports.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';

// In December: a window spanning the year end holds it, as it holds a day in January.
const TODAY = '2026-12-15';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
});

afterAll(async () => {
  pinToday(null);
  await service?.close();
});

const withKey = () => ({ 'Idempotency-Key': randomUUID() });

const person = (extra: Record<string, unknown> = {}) => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: `ada.${randomUUID()}@example.org`,
  ...extra,
});

async function create(extra: Record<string, unknown> = {}): Promise<Donor> {
  const response = await service.call<Donor>('POST', '/api/v1/donors', {
    body: person(extra),
    headers: withKey(),
  });
  expect(response.status).toBe(201);
  return response.body;
}

const patch = (id: number, body: Record<string, unknown>) =>
  service.call<Donor>('PATCH', `/api/v1/donors/${id}`, { body });

const get = (id: number) => service.call<Donor>('GET', `/api/v1/donors/${id}`);

const stored = (id: number) =>
  service.db.one(sql.unsafe`SELECT emails, phones, addresses FROM donors WHERE id = ${id}`);

/** Every donor's contact points and the events: what a refusal leaves. */
const everything = async () => ({
  donors: await service.db.any(sql.unsafe`
    SELECT id, email, phone, emails, phones, addresses, updated_at FROM donors ORDER BY id`),
  events: await service.count('events'),
});

const home = {
  line1: '12 St James Square',
  city: 'London',
  postal_code: 'SW1Y 4JH',
  country: 'GB',
};
const presented = (address: Record<string, string>) => ({
  line1: null,
  line2: null,
  city: null,
  region: null,
  postal_code: null,
  country: null,
  ...address,
});
const villa = { line1: '3 Via Roma', city: 'Sorrento', country: 'IT' };

describe('contact points on create and GET', () => {
  test('default to empty lists; mailing_address is the primary address, null without one', async () => {
    const bare = await create();
    expect(bare).toMatchObject({ emails: [], phones: [], addresses: [], mailing_address: null });
    expect(await stored(bare.id)).toEqual({ emails: [], phones: [], addresses: [] });
    const housed = await create({ address: home });
    expect(housed.mailing_address).toEqual(presented(home));
  });

  test('are stored and answered with defaults filled; GET and the list answer the same', async () => {
    const donor = await create({
      phone: '+44 20 7946 0000',
      emails: [
        { address: ' Ada@Work.example.org ', type: 'work' },
        { address: 'ada@old.example.org', type: 'other', status: 'bounced' },
      ],
      phones: [{ number: '+44 7700 900000', type: 'mobile' }],
      addresses: [
        { ...villa, type: 'seasonal', seasonal_from: '06-01', seasonal_to: '08-31' },
        { ...home, type: 'work', status: 'undeliverable', region: '' },
      ],
    });
    const emails = [
      { address: 'Ada@Work.example.org', type: 'work', status: 'active' },
      { address: 'ada@old.example.org', type: 'other', status: 'bounced' },
    ];
    const phones = [{ number: '+44 7700 900000', type: 'mobile', status: 'active' }];
    const addresses = [
      {
        ...presented(villa),
        type: 'seasonal',
        status: 'active',
        seasonal_from: '06-01',
        seasonal_to: '08-31',
      },
      {
        ...presented(home),
        type: 'work',
        status: 'undeliverable',
        seasonal_from: null,
        seasonal_to: null,
      },
    ];
    expect(donor).toMatchObject({ emails, phones, addresses, mailing_address: null });
    expect(await stored(donor.id)).toEqual({ emails, phones, addresses });
    const read = await get(donor.id);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ emails, phones, addresses, mailing_address: null });
    const page = await service.call<{ data: Donor[] }>('GET', '/api/v1/donors?limit=100');
    expect(page.body.data.find((row) => row.id === donor.id)).toEqual(donor);
  });

  test('mailing_address is not settable: unknown_field, three ways', async () => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/donors',
      'POST',
      () => person({ mailing_address: home }),
      [{ param: 'mailing_address', code: 'unknown_field' }],
      everything,
      { headers: withKey },
    );
  });
});

describe('validation, three ways (nothing written)', () => {
  const refused = async (
    extra: Record<string, unknown>,
    expected: Array<{ param: string; code: string }>,
  ) =>
    expectSameFailureThreeWays(
      service,
      '/api/v1/donors',
      'POST',
      () => person(extra),
      expected,
      everything,
      { headers: withKey },
    );

  test('each list holds at most 10 entries and must be an array', async () => {
    const eleven = Array.from({ length: 11 }, (_, index) => ({
      address: `ada${index}@example.org`,
      type: 'home',
    }));
    await refused({ emails: eleven }, [{ param: 'emails', code: 'out_of_range' }]);
    const phones = Array.from({ length: 11 }, (_, index) => ({
      number: `555 01${index}`,
      type: 'home',
    }));
    await refused({ phones }, [{ param: 'phones', code: 'out_of_range' }]);
    await refused({ addresses: Array.from({ length: 11 }, () => ({ ...home, type: 'home' })) }, [
      { param: 'addresses', code: 'out_of_range' },
    ]);
    await refused({ emails: 'ada@example.org' }, [{ param: 'emails', code: 'invalid_type' }]);
    await refused({ emails: null }, [{ param: 'emails', code: 'invalid_type' }]);
  });

  test('an email entry: address required and valid, type required, enums, no unknown keys', async () => {
    await refused({ emails: [{ type: 'home' }] }, [
      { param: 'emails.0.address', code: 'required' },
    ]);
    await refused({ emails: [{ address: 'not an email', type: 'home' }] }, [
      { param: 'emails.0.address', code: 'invalid_format' },
    ]);
    await refused({ emails: [{ address: 'a@example.org' }] }, [
      { param: 'emails.0.type', code: 'required' },
    ]);
    await refused({ emails: [{ address: 'a@example.org', type: 'mobile', status: 'gone' }] }, [
      { param: 'emails.0.type', code: 'invalid_value' },
      { param: 'emails.0.status', code: 'invalid_value' },
    ]);
    await refused({ emails: [{ address: 'a@example.org', type: 'home', primary: true }] }, [
      { param: 'emails.0.primary', code: 'unknown_field' },
    ]);
    await refused({ emails: ['a@example.org'] }, [{ param: 'emails.0', code: 'invalid_type' }]);
  });

  test('a phone entry: number required, at most 40, type and status enums', async () => {
    await refused({ phones: [{ type: 'home' }] }, [{ param: 'phones.0.number', code: 'required' }]);
    await refused({ phones: [{ number: '  ', type: 'home' }] }, [
      { param: 'phones.0.number', code: 'required' },
    ]);
    await refused({ phones: [{ number: '5'.repeat(41), type: 'home' }] }, [
      { param: 'phones.0.number', code: 'too_long' },
    ]);
    await refused({ phones: [{ number: '555 0100', type: 'fax', status: 'bounced' }] }, [
      { param: 'phones.0.type', code: 'invalid_value' },
      { param: 'phones.0.status', code: 'invalid_value' },
    ]);
    await refused({ phones: [{ number: '555 0100' }] }, [
      { param: 'phones.0.type', code: 'required' },
    ]);
  });

  test('an address entry: the primary address’s rules, type, status and the seasonal window', async () => {
    await refused({ addresses: [{ ...home, country: 'XX', type: 'home' }] }, [
      { param: 'addresses.0.country', code: 'invalid_value' },
    ]);
    await refused({ addresses: [{ ...home, line1: 'x'.repeat(201), type: 'home' }] }, [
      { param: 'addresses.0.line1', code: 'too_long' },
    ]);
    await refused({ addresses: [{ ...home }] }, [{ param: 'addresses.0.type', code: 'required' }]);
    await refused({ addresses: [{ ...home, type: 'holiday', status: 'bounced' }] }, [
      { param: 'addresses.0.type', code: 'invalid_value' },
      { param: 'addresses.0.status', code: 'invalid_value' },
    ]);
    await refused({ addresses: [{ ...villa, type: 'seasonal' }] }, [
      { param: 'addresses.0.seasonal_from', code: 'required' },
      { param: 'addresses.0.seasonal_to', code: 'required' },
    ]);
    await refused(
      {
        addresses: [
          { ...home, type: 'home' },
          { ...villa, type: 'seasonal', seasonal_from: '06-01', seasonal_to: null },
        ],
      },
      [{ param: 'addresses.1.seasonal_to', code: 'required' }],
    );
    await refused(
      { addresses: [{ ...home, type: 'home', seasonal_from: '06-01', seasonal_to: '08-31' }] },
      [
        { param: 'addresses.0.seasonal_from', code: 'not_allowed' },
        { param: 'addresses.0.seasonal_to', code: 'not_allowed' },
      ],
    );
  });

  test('seasonal_from and seasonal_to are real month-days written MM-DD', async () => {
    for (const bad of ['02-30', '13-01', '00-10', '04-31', '6-01', '2026-06-01', '06-1']) {
      await refused(
        { addresses: [{ ...villa, type: 'seasonal', seasonal_from: bad, seasonal_to: '08-31' }] },
        [{ param: 'addresses.0.seasonal_from', code: 'invalid_format' }],
      );
    }
    await refused(
      { addresses: [{ ...villa, type: 'seasonal', seasonal_from: '06-01', seasonal_to: 831 }] },
      [{ param: 'addresses.0.seasonal_to', code: 'invalid_type' }],
    );
    const leap = await create({
      addresses: [{ ...villa, type: 'seasonal', seasonal_from: '02-29', seasonal_to: '03-31' }],
    });
    expect(leap.addresses[0]).toMatchObject({ seasonal_from: '02-29', seasonal_to: '03-31' });
  });

  test('an email repeating the primary or an earlier entry, case-insensitively: already_in_use', async () => {
    await refused(
      {
        email: 'Ada@Example.org',
        emails: [{ address: 'ADA@example.ORG', type: 'home' }],
      },
      [{ param: 'emails.0.address', code: 'already_in_use' }],
    );
    await refused(
      {
        emails: [
          { address: 'one@example.org', type: 'home' },
          { address: 'two@example.org', type: 'work' },
          { address: 'One@Example.org', type: 'other', status: 'inactive' },
        ],
      },
      [{ param: 'emails.2.address', code: 'already_in_use' }],
    );
  });

  test('a phone repeating the primary or an earlier entry, by digits alone: already_in_use', async () => {
    await refused(
      { phone: '+1 (555) 010-0000', phones: [{ number: '15550100000', type: 'mobile' }] },
      [{ param: 'phones.0.number', code: 'already_in_use' }],
    );
    await refused(
      {
        phones: [
          { number: '555 0100', type: 'home' },
          { number: '555-0101', type: 'work' },
          { number: '(555) 0100', type: 'mobile' },
        ],
      },
      [{ param: 'phones.2.number', code: 'already_in_use' }],
    );
  });

  test('every problem of a body is reported at once', async () => {
    await refused(
      {
        email: 'ada@example.org',
        emails: [{ address: 'ADA@example.org', type: 'home' }],
        phones: [{ number: '555', type: 'fax' }],
        addresses: [{ ...villa, type: 'seasonal', seasonal_to: '01-31' }],
      },
      [
        { param: 'emails.0.address', code: 'already_in_use' },
        { param: 'phones.0.type', code: 'invalid_value' },
        { param: 'addresses.0.seasonal_from', code: 'required' },
      ],
    );
  });
});

describe('what may repeat', () => {
  test('a listed email may be another donor’s primary email; an address may repeat the primary', async () => {
    const first = await create();
    const second = await create({
      address: home,
      emails: [{ address: first.email, type: 'work' }],
      addresses: [{ ...home, type: 'home' }],
    });
    expect(second.emails).toEqual([{ address: first.email, type: 'work', status: 'active' }]);
    expect(second.addresses).toHaveLength(1);
  });
});

describe('PATCH', () => {
  test('replaces a whole list; a list not sent is kept', async () => {
    const donor = await create({
      emails: [
        { address: 'one@example.org', type: 'home' },
        { address: 'two@example.org', type: 'work' },
      ],
      phones: [{ number: '555 0100', type: 'home' }],
    });
    const updated = await patch(donor.id, {
      emails: [{ address: 'three@example.org', type: 'other', status: 'inactive' }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.emails).toEqual([
      { address: 'three@example.org', type: 'other', status: 'inactive' },
    ]);
    expect(updated.body.phones).toEqual([{ number: '555 0100', type: 'home', status: 'active' }]);
    expect(await stored(donor.id)).toMatchObject({
      emails: [{ address: 'three@example.org', type: 'other', status: 'inactive' }],
      phones: [{ number: '555 0100', type: 'home', status: 'active' }],
    });
    const cleared = await patch(donor.id, { phones: [] });
    expect(cleared.body.phones).toEqual([]);
    expect((await get(donor.id)).body.emails).toHaveLength(1);
    const events = await service.db.anyFirst(sql.unsafe`
      SELECT type FROM events WHERE object_type = 'donor' AND object_id = ${donor.id}
      ORDER BY seq`);
    expect(events).toEqual(['donor.created', 'donor.updated', 'donor.updated']);
  });

  test('a new primary email that repeats a listed one is refused at the entry, three ways', async () => {
    const donor = await create({ emails: [{ address: 'listed@example.org', type: 'home' }] });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { email: 'Listed@example.org' },
      [{ param: 'emails.0.address', code: 'already_in_use' }],
      everything,
    );
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { addresses: [{ ...home, type: 'seasonal', seasonal_from: '12-01' }] },
      [{ param: 'addresses.0.seasonal_to', code: 'required' }],
      everything,
    );
  });
});

describe('mailing_address by the one clock', () => {
  const winter = {
    line1: '1 Ocean Drive',
    city: 'Miami',
    region: 'FL',
    country: 'US',
  };
  const wrapping = { ...winter, type: 'seasonal', seasonal_from: '12-01', seasonal_to: '02-28' };

  test('a window spanning the year end holds days on either side of it', async () => {
    const donor = await create({ address: home, addresses: [wrapping] });
    expect(donor.mailing_address).toEqual(presented(winter));
    try {
      pinToday('2027-01-20');
      expect((await get(donor.id)).body.mailing_address).toEqual(presented(winter));
      pinToday('2027-02-28');
      expect((await get(donor.id)).body.mailing_address).toEqual(presented(winter));
      pinToday('2027-03-01');
      expect((await get(donor.id)).body.mailing_address).toEqual(presented(home));
      pinToday('2026-11-30');
      expect((await get(donor.id)).body.mailing_address).toEqual(presented(home));
    } finally {
      pinToday(TODAY);
    }
  });

  test('an undeliverable or inactive seasonal address is not chosen; the first active one in season is', async () => {
    const elsewhere = { line1: '9 Rue de Rivoli', city: 'Paris', country: 'FR' };
    const donor = await create({
      address: home,
      addresses: [
        { ...wrapping, status: 'undeliverable' },
        { ...wrapping, line1: '2 Ocean Drive', status: 'inactive' },
        { ...villa, type: 'seasonal', seasonal_from: '06-01', seasonal_to: '08-31' },
        { ...elsewhere, type: 'seasonal', seasonal_from: '12-10', seasonal_to: '12-20' },
        { ...winter, type: 'seasonal', seasonal_from: '11-01', seasonal_to: '01-31' },
      ],
    });
    expect(donor.mailing_address).toEqual(presented(elsewhere));
    const undeliverable = await create({
      address: home,
      addresses: [{ ...wrapping, status: 'undeliverable' }],
    });
    expect(undeliverable.mailing_address).toEqual(presented(home));
  });

  test('a seasonal address in season without a primary address; null with neither', async () => {
    const donor = await create({ addresses: [wrapping] });
    expect(donor.mailing_address).toEqual(presented(winter));
    const outOfSeason = await create({
      addresses: [{ ...villa, type: 'seasonal', seasonal_from: '06-01', seasonal_to: '08-31' }],
    });
    expect(outOfSeason.mailing_address).toBeNull();
  });
});

test('another institution’s donor is as absent as a missing one', async () => {
  const other = await service.createTenant('Other College');
  const donor = await create();
  const response = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
    key: other.key,
    body: { emails: [{ address: 'x@example.org', type: 'home' }] },
  });
  expect(response.status).toBe(404);
  expect(await stored(donor.id)).toEqual({ emails: [], phones: [], addresses: [] });
});

describe('imports', () => {
  test('emails, phones and addresses are JSON cells, judged as the single write judges them', async () => {
    const tag = `imp${randomUUID().slice(0, 8)}`;
    const cell = (value: unknown) => `"${JSON.stringify(value).replaceAll('"', '""')}"`;
    const csv = [
      'role,first_name,last_name,email,emails,phones,addresses',
      [
        'Individual,Ann,Listed',
        `${tag}a@example.org`,
        cell([{ address: `${tag}work@example.org`, type: 'work' }]),
        cell([{ number: '555 0100', type: 'mobile' }]),
        cell([
          { line1: '3 Via Roma', type: 'seasonal', seasonal_from: '06-01', seasonal_to: '08-31' },
        ]),
      ].join(','),
      [
        'Individual,Bob,Repeated',
        `${tag}b@example.org`,
        cell([{ address: `${tag}B@example.org`, type: 'home' }]),
        '',
        cell([{ line1: '3 Via Roma', type: 'seasonal' }]),
      ].join(','),
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 1,
    });
    expect(
      (await rowErrors(service, answer.body.id)).map((row) =>
        row.errors.map(({ param, code }) => ({ row: row.row, param, code })),
      ),
    ).toEqual([
      [
        { row: 3, param: 'emails.0.address', code: 'already_in_use' },
        { row: 3, param: 'addresses.0.seasonal_from', code: 'required' },
        { row: 3, param: 'addresses.0.seasonal_to', code: 'required' },
      ],
    ]);
    expect(
      await service.db.one(sql.unsafe`
        SELECT emails, phones, addresses FROM donors WHERE email = ${`${tag}a@example.org`}`),
    ).toEqual({
      emails: [{ address: `${tag}work@example.org`, type: 'work', status: 'active' }],
      phones: [{ number: '555 0100', type: 'mobile', status: 'active' }],
      addresses: [
        {
          line1: '3 Via Roma',
          line2: null,
          city: null,
          region: null,
          postal_code: null,
          country: null,
          type: 'seasonal',
          status: 'active',
          seasonal_from: '06-01',
          seasonal_to: '08-31',
        },
      ],
    });
  });
});
