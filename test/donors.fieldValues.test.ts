// Donor field values: a wrong JSON type is invalid_type, and valid edge cases are accepted.
import {
  FOREIGN_EMAIL,
  long,
  longEmail,
  person,
  refs,
  runThreeWays,
  service,
  setUpDonorValidationTests,
  type Body,
  type CreateCase,
} from './helpers/donorsValidation.js';

setUpDonorValidationTests();

/**
 * A value of the wrong JSON type is `invalid_type`, not `required` (validateBody parses with
 * `reportInput: true`, so zod's issue keeps the input that tells the two apart).
 */
const typeCases: CreateCase[] = [
  {
    name: 'first_name as a number',
    body: () => ({ ...person, first_name: 123 }),
    expected: [['first_name', 'invalid_type']],
  },
  {
    name: 'last_name as a boolean',
    body: () => ({ ...person, last_name: true }),
    expected: [['last_name', 'invalid_type']],
  },
  {
    name: 'organization_name as an object',
    body: () => ({ role: 'Organization', organization_name: { name: 'Acme' } }),
    expected: [['organization_name', 'invalid_type']],
  },
  {
    name: 'email as a number',
    body: () => ({ ...person, email: 42 }),
    expected: [['email', 'invalid_type']],
  },
  {
    name: 'phone as a number',
    body: () => ({ ...person, phone: 5551234 }),
    expected: [['phone', 'invalid_type']],
  },
  {
    name: 'gives_anonymously as a string',
    body: () => ({ ...person, gives_anonymously: 'yes' }),
    expected: [['gives_anonymously', 'invalid_type']],
  },
  {
    name: 'address as a string',
    body: () => ({ ...person, address: '1 Main St' }),
    expected: [['address', 'invalid_type']],
  },
  {
    name: 'address as an array',
    body: () => ({ ...person, address: ['1 Main St'] }),
    expected: [['address', 'invalid_type']],
  },
  {
    name: 'address country as a number',
    body: () => ({ ...person, address: { country: 840 } }),
    expected: [['address.country', 'invalid_type']],
  },
  {
    name: 'address line1 as a number',
    body: () => ({ ...person, address: { line1: 10 } }),
    expected: [['address.line1', 'invalid_type']],
  },
  {
    name: 'assigned_user_id as a numeric string',
    body: () => ({ ...person, assigned_user_id: String(refs.activeUser) }),
    expected: [['assigned_user_id', 'invalid_type']],
  },
  {
    name: 'assigned_user_id as a fraction',
    body: () => ({ ...person, assigned_user_id: 1.5 }),
    expected: [['assigned_user_id', 'invalid_type']],
  },
  {
    name: 'several wrong types at once',
    body: () => ({ role: 'Individual', first_name: 1, last_name: 2, gives_anonymously: 'no' }),
    expected: [
      ['first_name', 'invalid_type'],
      ['last_name', 'invalid_type'],
      ['gives_anonymously', 'invalid_type'],
    ],
  },
];

describe('POST /donors reports a wrong JSON type as invalid_type ', () => {
  test.each(typeCases)('$name', async ({ body, expected }) => {
    await runThreeWays('POST', '/api/v1/donors', body(), expected);
  });

  test('PATCH with a wrong type', async () => {
    await runThreeWays(
      'PATCH',
      `/api/v1/donors/${refs.patchTarget}`,
      { phone: 12, gives_anonymously: 'true' },
      [
        ['phone', 'invalid_type'],
        ['gives_anonymously', 'invalid_type'],
      ],
    );
  });
});

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
