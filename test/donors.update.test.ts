// Donor retrieve and update over HTTP (product.md §4 "Donor").
import { randomUUID } from 'node:crypto';
import { ISO_MS } from './helpers/responses.js';
import {
  create,
  createGift,
  donorRow,
  expectError,
  officerId,
  service,
  setUpDonorTests,
  type Donor,
  type ErrorEnvelope,
} from './helpers/donors.js';

setUpDonorTests();

describe('GET /donors/{id}', () => {
  test('returns the donor with giving totals computed from its gifts only', async () => {
    const donor = await create({ role: 'Individual', first_name: 'Mary', last_name: 'Somerville' });
    const bystander = await create({ role: 'Individual', first_name: 'Other', last_name: 'Giver' });

    const empty = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      ...donor,
      giving: {
        total_amount: 0,
        gift_count: 0,
        first_gift_date: null,
        last_gift_date: null,
        soft_credit_total: 0,
        soft_credit_count: 0,
        pledged_outstanding: 0,
      },
    });

    await createGift(donor.id, 100.5, '2026-01-15');
    await createGift(donor.id, 250, '2025-12-01');
    await createGift(donor.id, 0.25, '2025-12-31');
    await createGift(bystander.id, 1000, '2024-06-01');

    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.giving).toEqual({
      total_amount: 350.75,
      gift_count: 3,
      first_gift_date: '2025-12-01',
      last_gift_date: '2026-01-15',
      soft_credit_total: 0,
      soft_credit_count: 0,
      pledged_outstanding: 0,
    });
    expect({ ...fetched.body, giving: undefined }).toEqual({ ...donor, giving: undefined });
  });
});

describe('PATCH /donors/{id}', () => {
  test('merges the sent fields into the donor and keeps the rest', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Alan',
      last_name: 'Turing',
      email: 'alan@example.org',
      phone: '01234',
      assigned_user_id: officerId,
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { phone: ' 05678 ', gives_anonymously: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('Location')).toBeNull();
    expect(response.body).toEqual({
      ...donor,
      phone: '05678',
      gives_anonymously: true,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(donor.updated_at),
    );

    const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
    expect({ ...fetched.body, giving: undefined }).toEqual({ ...response.body, giving: undefined });
  });

  test('an empty body changes nothing but is accepted', async () => {
    const donor = await create({ role: 'Corporation', organization_name: 'Ferranti' });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, { body: {} });
    expect(response.status).toBe(200);
    expect({ ...response.body, updated_at: null }).toEqual({ ...donor, updated_at: null });
  });

  test('revalidates the merged record: a role change needs the new role’s fields', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Joan',
      last_name: 'Clarke',
      email: 'joan@example.org',
    });

    const refused = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Organization' },
    });
    expectError(refused, 422, 'invalid_request_error', 'validation_failed');
    expect((refused.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'organization_name', code: 'required', message: expect.any(String) },
    ]);
    expect(await donorRow(donor.id)).toMatchObject({ role: 'Individual', organization_name: null });

    const accepted = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Organization', organization_name: 'Bletchley Park Trust' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      role: 'Organization',
      organization_name: 'Bletchley Park Trust',
      display_name: 'Bletchley Park Trust',
      first_name: 'Joan',
      last_name: 'Clarke',
    });

    // Back to Individual: the organisation name must go at the same time.
    const notAllowed = await service.call('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Individual' },
    });
    expectError(notAllowed, 422, 'invalid_request_error', 'validation_failed');
    expect((notAllowed.body as unknown as ErrorEnvelope).error.errors).toEqual([
      { param: 'organization_name', code: 'not_allowed', message: expect.any(String) },
    ]);
    const back = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { role: 'Individual', organization_name: null },
    });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      role: 'Individual',
      organization_name: null,
      display_name: 'Joan Clarke',
    });
  });

  test('null clears an optional field such as email, address or assigned_user_id', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Hedy',
      last_name: 'Lamarr',
      email: 'hedy@example.org',
      address: { city: 'Vienna', country: 'AT' },
      assigned_user_id: officerId,
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { email: null, address: null, assigned_user_id: null },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      email: null,
      address: null,
      assigned_user_id: null,
      first_name: 'Hedy',
    });
    expect(await donorRow(donor.id)).toMatchObject({
      email: null,
      address: null,
      assigned_user_id: null,
    });

    // The freed email can be used by another donor.
    const reuse = await service.call('POST', '/api/v1/donors', {
      body: {
        role: 'Individual',
        first_name: 'Other',
        last_name: 'Hedy',
        email: 'HEDY@example.org',
      },
    });
    expect(reuse.status).toBe(201);
  });

  test('a donor may keep its own email in another letter case', async () => {
    const donor = await create({
      role: 'Individual',
      first_name: 'Katherine',
      last_name: 'Johnson',
      email: 'kj@example.org',
    });
    const response = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}`, {
      body: { email: 'KJ@Example.org' },
    });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('KJ@Example.org');
  });

  test.each([
    ['query parameter', '?dry_run=true', {}],
    ['header', '', { 'Dry-Run': 'true' }],
  ])(
    'a dry run (%s) returns the would-be donor and changes nothing',
    async (_label, query, headers) => {
      const donor = await create({
        role: 'Individual',
        first_name: 'Emmy',
        last_name: 'Noether',
        email: `emmy.${randomUUID()}@example.org`,
      });
      const rowBefore = await donorRow(donor.id);

      const dry = await service.call<Donor>('PATCH', `/api/v1/donors/${donor.id}${query}`, {
        body: { role: 'Foundation', organization_name: 'Noether Foundation', email: null },
        headers,
      });
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({
        ...donor,
        role: 'Foundation',
        organization_name: 'Noether Foundation',
        display_name: 'Noether Foundation',
        email: null,
        updated_at: expect.stringMatching(ISO_MS),
      });

      expect(await donorRow(donor.id)).toEqual(rowBefore);
      const fetched = await service.call<Donor>('GET', `/api/v1/donors/${donor.id}`);
      expect({ ...fetched.body, giving: undefined }).toEqual({ ...donor, giving: undefined });
    },
  );
});
