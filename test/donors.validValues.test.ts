import {
  FOREIGN_EMAIL,
  long,
  longEmail,
  person,
  refs,
  service,
  setUpDonorValidationTests,
  type Body,
} from './helpers/donorsValidation.js';

setUpDonorValidationTests();

interface AcceptedCase {
  name: string;
  body: () => Body;
}

const acceptedCases: AcceptedCase[] = [
  {
    name: "an email that only another institution's donor uses",
    body: () => ({ ...person, email: FOREIGN_EMAIL.toUpperCase() }),
  },
  {
    name: 'names at their maximum lengths',
    body: () => ({
      role: 'Household',
      first_name: long(100),
      last_name: long(100),
      organization_name: long(200),
      phone: '1'.repeat(40),
      email: longEmail(254),
    }),
  },
  {
    name: 'a Household with only a last_name',
    body: () => ({ role: 'Household', last_name: 'Babbage', email: 'babbage@example.org' }),
  },
  {
    name: 'a deceased Individual',
    body: () => ({ ...person, status: 'deceased', email: 'late.ada@example.org' }),
  },
  {
    name: 'an Organization without personal names',
    body: () => ({
      role: 'Corporation',
      organization_name: 'Difference Engines plc',
      email: 'info@engines.example',
    }),
  },
  {
    name: 'an active assigned user and a full address',
    body: () => ({
      ...person,
      email: 'assigned.ada@example.org',
      assigned_user_id: refs.activeUser,
      address: {
        line1: '1 Main St',
        line2: null,
        city: 'London',
        region: '',
        postal_code: 'W1',
        country: 'GB',
      },
    }),
  },
];

describe('POST /donors accepts valid edge cases, as a dry run first and then for real', () => {
  test.each(acceptedCases)('$name', async ({ body }) => {
    const sent = body();
    const before = await service.count('donors', service.tenant.institutionId);

    const dry = await service.call<{ id: number }>('POST', '/api/v1/donors?dry_run=true', {
      body: sent,
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(await service.count('donors', service.tenant.institutionId)).toBe(before);

    const real = await service.call<{ id: number }>('POST', '/api/v1/donors', { body: sent });
    expect(real.status).toBe(201);
    expect(real.body.id).toBeGreaterThan(0);
    expect({ ...real.body, id: 0, created_at: null, updated_at: null }).toEqual({
      ...dry.body,
      created_at: null,
      updated_at: null,
    });
    expect(await service.count('donors', service.tenant.institutionId)).toBe(before + 1);
  });
});
