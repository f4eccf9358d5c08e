/** The demo institution's named records: what `npm run demo` writes through the API. */

export const INSTITUTION = 'Northbridge University';
/** Added by the volume seeder after the named records. */
export const SEEDED = { donors: 150, gifts: 320, funds: 4 };

export type Body = Record<string, unknown>;

export const isoDate = (date: Date) => date.toISOString().slice(0, 10);
export const daysAgo = (days: number) => isoDate(new Date(Date.now() - days * 86_400_000));
export const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '');

export const address = (line1: string, city: string, region: string, postalCode: string) => ({
  line1,
  city,
  region,
  postal_code: postalCode,
  country: 'US',
});

export const staff = [
  { first_name: 'Dana', last_name: 'Whitfield', role: 'admin' },
  { first_name: 'Marcus', last_name: 'Osei', role: 'gift_officer' },
  { first_name: 'Priya', last_name: 'Raman', role: 'gift_officer' },
  { first_name: 'Grace', last_name: 'Liu', role: 'gift_officer' },
  { first_name: 'Elena', last_name: 'Duarte', role: 'scholarship_manager' },
  { first_name: 'Tom', last_name: 'Becker', role: 'viewer' },
];

export const funds = [
  {
    code: 'ANNUAL',
    name: 'Northbridge Annual Fund',
    description: 'Unrestricted support for the university’s greatest needs.',
  },
  {
    code: 'STEM-END',
    name: 'STEM Scholarship Endowment',
    description: 'Endowed scholarships for students in science, technology and engineering.',
    restriction: 'permanently_restricted',
    endowed: true,
    award_limit: 150000,
  },
  {
    code: 'FIRSTGEN',
    name: 'First-Generation Student Fund',
    description: 'Grants for students who are the first in their family at university.',
    restriction: 'temporarily_restricted',
    award_limit: 90000,
  },
  {
    code: 'ARTS',
    name: 'Hartley Arts & Humanities Fund',
    restriction: 'temporarily_restricted',
    award_limit: 60000,
  },
  {
    code: 'ATHLETICS',
    name: 'Athletics Excellence Fund',
    restriction: 'temporarily_restricted',
    award_limit: 70000,
  },
  { code: 'LIBRARY', name: 'Library Acquisitions Fund' },
];

/** Named donors; `officer` indexes `staff`, gifts are [amount, days ago, fund code, type]. */
export const donors: { body: Body; officer: number; gifts: [number, number, string, string][] }[] =
  [
    {
      body: {
        role: 'Individual',
        first_name: 'Margaret',
        last_name: 'Chen',
        email: 'margaret.chen@example.org',
        phone: '+1 617 555 0142',
        address: address('14 Beacon Street', 'Boston', 'MA', '02108'),
      },
      officer: 1,
      gifts: [
        [25000, 700, 'STEM-END', 'stock'],
        [25000, 335, 'STEM-END', 'stock'],
        [1000, 40, 'ANNUAL', 'credit_card'],
      ],
    },
    {
      body: {
        role: 'Individual',
        first_name: 'Robert',
        last_name: 'Alvarez',
        email: 'r.alvarez@example.com',
        address: address('220 Cedar Lane', 'Austin', 'TX', '78701'),
      },
      officer: 2,
      gifts: [
        [250, 400, 'ANNUAL', 'credit_card'],
        [250, 35, 'ANNUAL', 'credit_card'],
      ],
    },
    {
      body: {
        role: 'Household',
        first_name: 'Samuel and Ruth',
        last_name: 'Okafor',
        email: 'okafor.family@example.net',
        address: address('9 Willow Court', 'Evanston', 'IL', '60201'),
      },
      officer: 1,
      gifts: [
        [5000, 500, 'FIRSTGEN', 'check'],
        [7500, 120, 'FIRSTGEN', 'check'],
      ],
    },
    {
      body: {
        role: 'Household',
        last_name: 'Lindqvist',
        email: 'lindqvist.household@example.org',
        address: address('87 Harbor Road', 'Portland', 'ME', '04101'),
      },
      officer: 3,
      gifts: [[1500, 220, 'LIBRARY', 'bank_transfer']],
    },
    {
      body: {
        role: 'Organization',
        organization_name: 'Northbridge Alumni Association',
        email: 'giving@alumni.northbridge.example.edu',
      },
      officer: 2,
      gifts: [
        [12000, 600, 'ATHLETICS', 'bank_transfer'],
        [15000, 240, 'ATHLETICS', 'bank_transfer'],
      ],
    },
    {
      body: {
        role: 'Foundation',
        organization_name: 'Hartley Family Foundation',
        email: 'grants@hartleyfoundation.example.org',
        address: address('1 Foundation Plaza', 'New York', 'NY', '10017'),
      },
      officer: 1,
      gifts: [
        [50000, 650, 'ARTS', 'bank_transfer'],
        [40000, 280, 'ARTS', 'pledge'],
      ],
    },
    {
      body: {
        role: 'Corporation',
        organization_name: 'Meridian Health Systems',
        email: 'community@meridianhealth.example.com',
      },
      officer: 3,
      gifts: [
        [20000, 450, 'STEM-END', 'bank_transfer'],
        [10000, 90, 'FIRSTGEN', 'bank_transfer'],
      ],
    },
    {
      body: {
        role: 'Corporation',
        organization_name: 'Cobalt Robotics Inc.',
        email: 'foundation@cobaltrobotics.example.com',
      },
      officer: 2,
      gifts: [
        [15000, 300, 'STEM-END', 'stock'],
        [2500, 10, 'ANNUAL', 'in_kind'],
      ],
    },
    {
      body: {
        role: 'Individual',
        first_name: 'Aiko',
        last_name: 'Tanaka',
        email: 'aiko.tanaka@example.jp',
        gives_anonymously: true,
      },
      officer: 3,
      gifts: [
        [10000, 380, 'LIBRARY', 'check'],
        [10000, 15, 'LIBRARY', 'check'],
      ],
    },
    {
      // No email: created with an Idempotency-Key, its only protection against duplicates.
      body: {
        role: 'Individual',
        first_name: 'Daniel',
        last_name: 'Fitzgerald',
        phone: '+1 312 555 0199',
      },
      officer: 2,
      gifts: [
        [100, 560, 'ANNUAL', 'cash'],
        [100, 190, 'ANNUAL', 'cash'],
        [150, 5, 'ANNUAL', 'cash'],
      ],
    },
    {
      body: {
        role: 'Individual',
        first_name: 'Eleanor',
        last_name: 'Brennan',
        email: 'eleanor.brennan@example.org',
        status: 'deceased',
      },
      officer: 1,
      gifts: [[100000, 900, 'STEM-END', 'other']],
    },
    {
      body: {
        role: 'Individual',
        first_name: 'Sofia',
        last_name: 'Marquez',
        email: 'sofia.marquez@example.com',
        status: 'inactive',
      },
      officer: 3,
      gifts: [[75, 800, 'ANNUAL', 'credit_card']],
    },
  ];

export const scholarships = [
  { name: 'STEM Excellence Scholarship', fund: 'STEM-END', amount: 5000 },
  { name: 'Ada Lovelace Women in Computing Award', fund: 'STEM-END', amount: 4000 },
  { name: 'First-Generation Scholars Grant', fund: 'FIRSTGEN', amount: 3500 },
  { name: 'Hartley Prize in the Humanities', fund: 'ARTS', amount: 3000 },
  { name: 'Northbridge Athletic Scholarship', fund: 'ATHLETICS', amount: 4500 },
];

export const STUDENTS = 40;
/** Awards in the current cycle end in these statuses, in turn. */
export const currentStatuses = [
  'offered',
  'accepted',
  'accepted',
  'disbursed',
  'declined',
  'offered',
];
