// Donor create over HTTP (product.md §1, §3, §4 "Donor"), with and without an Idempotency-Key.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { ISO_MS } from './helpers/responses.js';
import {
  create,
  donorCount,
  donorRow,
  expectError,
  officerId,
  service,
  setUpDonorTests,
  withKey,
  type Donor,
  type ErrorEnvelope,
} from './helpers/donors.js';

setUpDonorTests();

describe('donor create without an email needs an Idempotency-Key', () => {
  test.each([
    ['no email field', {}],
    ['email null', { email: null }],
    ['email blank', { email: '   ' }],
  ])('%s, real or dry run, without a key: 400 idempotency_key_required', async (_label, extra) => {
    const body = { role: 'Individual', first_name: 'Keyless', last_name: 'Donor', ...extra };
    const before = await donorCount();
    for (const [path, headers] of [
      ['/api/v1/donors', {}],
      ['/api/v1/donors?dry_run=true', {}],
      ['/api/v1/donors', { 'Dry-Run': 'true' }],
    ] as const) {
      const response = await service.call('POST', path, { body, headers });
      expectError(response, 400, 'idempotency_error', 'idempotency_key_required');
      expect((response.body as unknown as ErrorEnvelope).error.param).toBe('Idempotency-Key');
    }
    expect(await donorCount()).toBe(before);
  });

  test('with a key the same create succeeds, and the dry run too', async () => {
    const body = { role: 'Individual', first_name: 'Keyed', last_name: 'Donor' };
    const before = await donorCount();
    const dry = await service.call<Donor>('POST', '/api/v1/donors?dry_run=true', {
      body,
      headers: withKey(),
    });
    expect(dry.status).toBe(201);
    expect(await donorCount()).toBe(before);
    const real = await service.call<Donor>('POST', '/api/v1/donors', { body, headers: withKey() });
    expect(real.status).toBe(201);
    expect(real.body.email).toBeNull();
    expect(await donorCount()).toBe(before + 1);
  });

  test('with an email no key is needed', async () => {
    const response = await service.call<Donor>('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'Mailed',
        last_name: 'Donor',
        email: 'mailed@example.org',
      },
    });
    expect(response.status).toBe(201);
    expect(await donorRow(response.body.id)).not.toBeNull();
  });
});

describe('POST /donors', () => {
  test('answers 201 with a Location header and the full donor; the row holds the trimmed values', async () => {
    const response = await service.call<Donor>('POST', '/api/v1/donors', {
      headers: withKey(),
      body: {
        role: 'Individual',
        first_name: '  Ada ',
        last_name: 'Lovelace  ',
        email: ' Ada@Example.org ',
        phone: ' +44 20 7946 0000 ',
        address: {
          line1: '12 St James Square',
          city: 'London',
          postal_code: 'SW1Y 4JH',
          country: 'GB',
          region: ' ',
        },
        assigned_user_id: officerId,
        gives_anonymously: true,
      },
    });
    expect(response.status).toBe(201);
    const donor = response.body;
    expect(donor.id).toEqual(expect.any(Number));
    expect(donor.id).toBeGreaterThan(0);
    expect(response.headers.get('Location')).toBe(`/api/v1/donors/${donor.id}`);
    expect(donor).toEqual({
      id: donor.id,
      object: 'donor',
      role: 'Individual',
      display_name: 'Ada Lovelace',
      first_name: 'Ada',
      last_name: 'Lovelace',
      organization_name: null,
      email: 'Ada@Example.org',
      external_id: null,
      phone: '+44 20 7946 0000',
      address: {
        line1: '12 St James Square',
        line2: null,
        city: 'London',
        region: null,
        postal_code: 'SW1Y 4JH',
        country: 'GB',
      },
      assigned_user_id: officerId,
      status: 'active',
      gives_anonymously: true,
      tag_ids: [],
      household_id: null,
      deceased_on: null,
      communication_restrictions: [],
      emails: [],
      phones: [],
      addresses: [],
      mailing_address: {
        line1: '12 St James Square',
        line2: null,
        city: 'London',
        region: null,
        postal_code: 'SW1Y 4JH',
        country: 'GB',
      },
      merged_into_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(donor.updated_at).toBe(donor.created_at);
    expect(Math.abs(Date.parse(donor.created_at) - Date.now())).toBeLessThan(60_000);

    const row = await donorRow(donor.id);
    expect(row).toMatchObject({
      institution_id: service.tenant.institutionId,
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'Ada@Example.org',
      assigned_user_id: officerId,
    });
  });

  test('defaults status to active, gives_anonymously to false and absent fields to null', async () => {
    const donor = await create({ role: 'Foundation', organization_name: 'Wellcome Trust' });
    expect(donor).toMatchObject({
      status: 'active',
      gives_anonymously: false,
      first_name: null,
      last_name: null,
      email: null,
      phone: null,
      address: null,
      assigned_user_id: null,
    });
  });

  test.each([
    ['Individual', { first_name: 'Ada', last_name: 'Lovelace' }, 'Ada Lovelace'],
    [
      'Household with an organization_name',
      { first_name: 'Ada', last_name: 'King', organization_name: 'The King Household' },
      'The King Household',
    ],
    [
      'Household without an organization_name',
      { first_name: 'Ada', last_name: 'King' },
      'Ada King',
    ],
    ['Household with only a last_name', { last_name: 'King' }, 'King'],
    ['Organization', { organization_name: 'Analytical Society' }, 'Analytical Society'],
    [
      'Organization with personal names too',
      { organization_name: 'Babbage & Co', first_name: 'Charles', last_name: 'Babbage' },
      'Babbage & Co',
    ],
    ['Foundation', { organization_name: 'Lovelace Foundation' }, 'Lovelace Foundation'],
    ['Corporation', { organization_name: 'Engines plc' }, 'Engines plc'],
  ])('display_name of a %s', async (label, names, expected) => {
    const role = label.split(' ')[0];
    const created = await create({ role, ...names });
    expect(created.display_name).toBe(expected);
    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${created.id}`);
    expect(fetched.body.display_name).toBe(expected);
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) answers 201 with id 0, no Location and the body the real call then returns',
    async (_label, query, headers) => {
      const email = `dry.${randomUUID()}@example.org`;
      const body = {
        role: 'Household',
        last_name: 'Somerville',
        organization_name: 'The Somervilles',
        email,
        assigned_user_id: officerId,
      };
      const key = randomUUID();
      const before = await donorCount();

      const dry = await service.call<Donor>('POST', `/api/v1/donors${query}`, {
        body,
        headers: { 'Idempotency-Key': key, ...headers },
      });
      expect(dry.status).toBe(201);
      expect(dry.body.id).toBe(0);
      expect(dry.headers.get('Location')).toBeNull();
      expect(dry.body.created_at).toMatch(ISO_MS);
      expect(dry.body.updated_at).toMatch(ISO_MS);
      expect(await donorCount()).toBe(before);
      expect(
        await service.db.maybeOne(sql.unsafe`SELECT id FROM donors WHERE email = ${email}`),
      ).toBeNull();

      // The dry run neither took the email nor consumed the key.
      const real = await service.call<Donor>('POST', '/api/v1/donors', {
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(real.status).toBe(201);
      expect(real.headers.get('Idempotent-Replayed')).toBeNull();
      expect(real.body.id).toBeGreaterThan(0);
      expect(real.body).toEqual({
        ...dry.body,
        id: real.body.id,
        created_at: real.body.created_at,
        updated_at: real.body.updated_at,
      });
      expect(await donorCount()).toBe(before + 1);
    },
  );
});

test('concurrent creates with one email in different letter cases make exactly one donor', async () => {
  const emails = [
    'race@example.org',
    'RACE@example.org',
    'Race@Example.org',
    'race@EXAMPLE.ORG',
    'rAcE@example.org',
  ];
  const responses = await Promise.all(
    emails.map((email, index) =>
      service.call('POST', '/api/v1/donors', {
        body: { role: 'Individual', first_name: `Racer${index}`, last_name: 'Donor', email },
      }),
    ),
  );
  const statuses = responses.map((response) => response.status).sort();
  expect(statuses).toEqual([201, 422, 422, 422, 422]);
  for (const response of responses.filter((item) => item.status === 422)) {
    expect((response.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'email', code: 'already_in_use', message: expect.any(String) },
    ]);
  }
  const rows = await service.db.any(
    sql.unsafe`SELECT id FROM donors WHERE lower(email) = 'race@example.org'`,
  );
  expect(rows).toHaveLength(1);
});
