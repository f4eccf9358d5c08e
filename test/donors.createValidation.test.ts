// Donor creates that fail validation: the same 422 three ways, and nothing written.
import {
  TAKEN_EMAIL,
  long,
  longEmail,
  person,
  refs,
  runThreeWays,
  setUpDonorValidationTests,
  type CreateCase,
} from './helpers/donorsValidation.js';

setUpDonorValidationTests();

const createCases: CreateCase[] = [
  // Required fields.
  {
    name: 'role missing',
    body: () => ({ first_name: 'Ada', last_name: 'Lovelace' }),
    expected: [['role', 'required']],
  },
  {
    name: 'role blank after trimming',
    body: () => ({ ...person, role: '   ' }),
    expected: [['role', 'required']],
  },
  { name: 'role null', body: () => ({ ...person, role: null }), expected: [['role', 'required']] },
  { name: 'empty body', body: () => ({}), expected: [['role', 'required']] },

  // Conditional requiredness per role.
  {
    name: 'Individual without first_name and last_name',
    body: () => ({ role: 'Individual' }),
    expected: [
      ['first_name', 'required'],
      ['last_name', 'required'],
    ],
  },
  {
    name: 'Individual with blank first_name and last_name',
    body: () => ({ role: 'Individual', first_name: '  ', last_name: '' }),
    expected: [
      ['first_name', 'required'],
      ['last_name', 'required'],
    ],
  },
  {
    name: 'Individual with null last_name',
    body: () => ({ role: 'Individual', first_name: 'Ada', last_name: null }),
    expected: [['last_name', 'required']],
  },
  {
    name: 'Household without last_name',
    body: () => ({ role: 'Household', first_name: 'Ada' }),
    expected: [['last_name', 'required']],
  },
  {
    name: 'Household with an organization_name but no last_name',
    body: () => ({ role: 'Household', organization_name: 'The Lovelace Family' }),
    expected: [['last_name', 'required']],
  },
  ...(['Organization', 'Foundation', 'Corporation'] as const).flatMap((role) => [
    {
      name: `${role} without organization_name`,
      body: () => ({ role, first_name: 'Ada', last_name: 'Lovelace' }),
      expected: [['organization_name', 'required']] as const,
    },
    {
      name: `${role} with blank organization_name`,
      body: () => ({ role, organization_name: ' \t ' }),
      expected: [['organization_name', 'required']] as const,
    },
  ]),
  {
    name: 'Individual with an organization_name',
    body: () => ({ ...person, organization_name: 'Analytical Engines Ltd' }),
    expected: [['organization_name', 'not_allowed']],
  },

  // Allowed values.
  {
    name: 'unknown role',
    body: () => ({ ...person, role: 'Company' }),
    expected: [['role', 'invalid_value']],
  },
  {
    name: 'role in the wrong letter case',
    body: () => ({ ...person, role: 'individual' }),
    expected: [['role', 'invalid_value']],
  },
  {
    name: 'unknown status',
    body: () => ({ ...person, status: 'archived' }),
    expected: [['status', 'invalid_value']],
  },
  {
    name: 'empty status',
    body: () => ({ ...person, status: '' }),
    expected: [['status', 'invalid_value']],
  },
  ...(['Household', 'Organization', 'Foundation', 'Corporation'] as const).map((role) => ({
    name: `deceased status for a ${role}`,
    body: () => ({
      role,
      last_name: 'Lovelace',
      organization_name: 'Lovelace Trust',
      status: 'deceased',
    }),
    expected: [['status', 'invalid_value']] as const,
  })),

  // Enum fields: a value of the wrong type is simply not one of the allowed values.
  {
    name: 'role as a number',
    body: () => ({ ...person, role: 1 }),
    expected: [['role', 'invalid_value']],
  },
  {
    name: 'status as a number',
    body: () => ({ ...person, status: 1 }),
    expected: [['status', 'invalid_value']],
  },
  {
    name: 'status null',
    body: () => ({ ...person, status: null }),
    expected: [['status', 'invalid_type']],
  },
  {
    name: 'gives_anonymously null',
    body: () => ({ ...person, gives_anonymously: null }),
    expected: [['gives_anonymously', 'invalid_type']],
  },
  {
    name: 'assigned_user_id zero',
    body: () => ({ ...person, assigned_user_id: 0 }),
    expected: [['assigned_user_id', 'out_of_range']],
  },
  {
    name: 'assigned_user_id negative',
    body: () => ({ ...person, assigned_user_id: -4 }),
    expected: [['assigned_user_id', 'out_of_range']],
  },

  // Lengths.
  {
    name: 'first_name over 100 characters',
    body: () => ({ ...person, first_name: long(101) }),
    expected: [['first_name', 'too_long']],
  },
  {
    name: 'last_name over 100 characters',
    body: () => ({ ...person, last_name: long(101) }),
    expected: [['last_name', 'too_long']],
  },
  {
    name: 'organization_name over 200 characters',
    body: () => ({ role: 'Foundation', organization_name: long(201) }),
    expected: [['organization_name', 'too_long']],
  },
  {
    name: 'phone over 40 characters',
    body: () => ({ ...person, phone: '1'.repeat(41) }),
    expected: [['phone', 'too_long']],
  },
  {
    name: 'email over 254 characters',
    body: () => ({ ...person, email: longEmail(255) }),
    expected: [['email', 'too_long']],
  },

  // Email format.
  ...['not-an-email', 'ada@', '@example.org', 'ada lovelace@example.org', 'ada@@example.org'].map(
    (email) => ({
      name: `email ${JSON.stringify(email)}`,
      body: () => ({ ...person, email }),
      expected: [['email', 'invalid_format']] as const,
    }),
  ),

  // Address sub-fields.
  {
    name: 'address with an unknown sub-field',
    body: () => ({ ...person, address: { line1: '1 Main St', street: 'Main' } }),
    expected: [['address.street', 'unknown_field']],
  },
  {
    name: 'address with two unknown sub-fields',
    body: () => ({ ...person, address: { zip: '12345', state: 'NY' } }),
    expected: [
      ['address.zip', 'unknown_field'],
      ['address.state', 'unknown_field'],
    ],
  },
  ...['USA', 'us', 'XX', ''].map((country) => ({
    name: `address country ${JSON.stringify(country)}`,
    body: () => ({ ...person, address: { city: 'London', country } }),
    expected: [['address.country', 'invalid_value']] as const,
  })),
  {
    name: 'address city over 100 characters',
    body: () => ({ ...person, address: { city: long(101) } }),
    expected: [['address.city', 'too_long']],
  },
  {
    name: 'address postal_code over 20 characters',
    body: () => ({ ...person, address: { postal_code: '1'.repeat(21) } }),
    expected: [['address.postal_code', 'too_long']],
  },

  // Unknown and read-only fields.
  {
    name: 'unknown field',
    body: () => ({ ...person, nickname: 'Ada' }),
    expected: [['nickname', 'unknown_field']],
  },
  {
    name: 'id (read-only)',
    body: () => ({ ...person, id: 7 }),
    expected: [['id', 'unknown_field']],
  },
  {
    name: 'display_name (read-only)',
    body: () => ({ ...person, display_name: 'Countess' }),
    expected: [['display_name', 'unknown_field']],
  },
  {
    name: 'object, created_at, updated_at and giving (read-only)',
    body: () => ({
      ...person,
      object: 'donor',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      giving: {},
    }),
    expected: [
      ['object', 'unknown_field'],
      ['created_at', 'unknown_field'],
      ['updated_at', 'unknown_field'],
      ['giving', 'unknown_field'],
    ],
  },

  // Uniqueness of email within the institution, ignoring letter case and surrounding spaces.
  {
    name: 'email already in use',
    body: () => ({ ...person, email: TAKEN_EMAIL }),
    expected: [['email', 'already_in_use']],
  },
  {
    name: 'email already in use in another letter case',
    body: () => ({ ...person, email: 'taken.donor@EXAMPLE.ORG' }),
    expected: [['email', 'already_in_use']],
  },
  {
    name: 'email already in use with surrounding spaces',
    body: () => ({ ...person, email: `  ${TAKEN_EMAIL.toLowerCase()} ` }),
    expected: [['email', 'already_in_use']],
  },

  // References to users.
  {
    name: 'assigned_user_id of a missing user',
    body: () => ({ ...person, assigned_user_id: 987654 }),
    expected: [['assigned_user_id', 'reference_not_found']],
  },
  {
    name: "assigned_user_id of another institution's user",
    body: () => ({ ...person, assigned_user_id: refs.foreignUser }),
    expected: [['assigned_user_id', 'reference_not_found']],
  },
  {
    name: 'assigned_user_id of a deactivated user',
    body: () => ({ ...person, assigned_user_id: refs.deactivatedUser }),
    expected: [['assigned_user_id', 'reference_inactive']],
  },

  // Several problems at once are all listed.
  {
    name: 'several field problems at once',
    body: () => ({
      role: 'Organization',
      email: 'bad-address',
      phone: '1'.repeat(41),
      nickname: 'Acme',
      address: { zip: '1', country: 'United States' },
      status: 'retired',
    }),
    expected: [
      ['organization_name', 'required'],
      ['email', 'invalid_format'],
      ['phone', 'too_long'],
      ['nickname', 'unknown_field'],
      ['address.zip', 'unknown_field'],
      ['address.country', 'invalid_value'],
      ['status', 'invalid_value'],
    ],
  },
  {
    name: 'field problems together with database checks',
    body: () => ({
      role: 'Individual',
      first_name: long(101),
      email: TAKEN_EMAIL,
      assigned_user_id: refs.deactivatedUser,
      organization_name: 'Not Allowed Ltd',
      display_name: 'Ada',
    }),
    expected: [
      ['first_name', 'too_long'],
      ['last_name', 'required'],
      ['email', 'already_in_use'],
      ['assigned_user_id', 'reference_inactive'],
      ['organization_name', 'not_allowed'],
      ['display_name', 'unknown_field'],
    ],
  },
];

describe('POST /donors validation: the real call and both dry-run forms fail alike and write nothing', () => {
  test.each(createCases)('$name', async ({ body, expected }) => {
    await runThreeWays('POST', '/api/v1/donors', body(), expected);
  });
});
