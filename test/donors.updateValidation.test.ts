import {
  TAKEN_EMAIL,
  long,
  refs,
  runThreeWays,
  setUpDonorValidationTests,
  type Body,
  type Expected,
} from './helpers/donorsValidation.js';

setUpDonorValidationTests();

interface PatchCase {
  name: string;
  body: () => Body;
  expected: Expected;
}

const patchCases: PatchCase[] = [
  {
    name: 'role changed to Organization without organization_name',
    body: () => ({ role: 'Organization' }),
    expected: [['organization_name', 'required']],
  },
  {
    name: 'role changed to Household with last_name cleared',
    body: () => ({ role: 'Household', last_name: null }),
    expected: [['last_name', 'required']],
  },
  {
    name: 'first_name cleared with null',
    body: () => ({ first_name: null }),
    expected: [['first_name', 'required']],
  },
  {
    name: 'last_name cleared with blanks',
    body: () => ({ last_name: '   ' }),
    expected: [['last_name', 'required']],
  },
  { name: 'role cleared', body: () => ({ role: null }), expected: [['role', 'required']] },
  {
    name: 'organization_name added to an Individual',
    body: () => ({ organization_name: 'Smith Holdings' }),
    expected: [['organization_name', 'not_allowed']],
  },
  {
    name: 'role changed to Foundation while the donor is deceased',
    body: () => ({ role: 'Foundation', organization_name: 'Smith Foundation', status: 'deceased' }),
    expected: [['status', 'invalid_value']],
  },
  {
    name: 'unknown status',
    body: () => ({ status: 'gone' }),
    expected: [['status', 'invalid_value']],
  },
  {
    name: 'id (read-only)',
    body: () => ({ id: refs.patchTarget }),
    expected: [['id', 'unknown_field']],
  },
  {
    name: 'display_name (read-only)',
    body: () => ({ display_name: 'P. Smith' }),
    expected: [['display_name', 'unknown_field']],
  },
  {
    name: 'unknown field',
    body: () => ({ middle_name: 'Q' }),
    expected: [['middle_name', 'unknown_field']],
  },
  {
    name: 'email of another donor',
    body: () => ({ email: TAKEN_EMAIL.toUpperCase() }),
    expected: [['email', 'already_in_use']],
  },
  {
    name: 'malformed email',
    body: () => ({ email: 'pat.smith' }),
    expected: [['email', 'invalid_format']],
  },
  {
    name: 'first_name too long',
    body: () => ({ first_name: long(101) }),
    expected: [['first_name', 'too_long']],
  },
  {
    name: 'address with an unknown sub-field and a bad country',
    body: () => ({ address: { county: 'Kent', country: 'UK' } }),
    expected: [
      ['address.county', 'unknown_field'],
      ['address.country', 'invalid_value'],
    ],
  },
  {
    name: 'assigned_user_id of a deactivated user',
    body: () => ({ assigned_user_id: refs.deactivatedUser }),
    expected: [['assigned_user_id', 'reference_inactive']],
  },
  {
    name: "assigned_user_id of another institution's user",
    body: () => ({ assigned_user_id: refs.foreignUser }),
    expected: [['assigned_user_id', 'reference_not_found']],
  },
  {
    name: 'several problems at once',
    body: () => ({
      role: 'Corporation',
      phone: '5'.repeat(41),
      status: 'gone',
      email: TAKEN_EMAIL,
    }),
    expected: [
      ['organization_name', 'required'],
      ['phone', 'too_long'],
      ['status', 'invalid_value'],
      ['email', 'already_in_use'],
    ],
  },
];

describe('PATCH /donors/{id} validation: the merged record is revalidated, alike for real and dry runs', () => {
  test.each(patchCases)('$name', async ({ body, expected }) => {
    await runThreeWays('PATCH', `/api/v1/donors/${refs.patchTarget}`, body(), expected);
  });
});
