/**
 * The demo's people (constituents.md §1–4): the two named households get their members, donors
 * are related to each other (spouses, an employee of a corporation, a parent), Margaret Chen
 * winters in Florida (a seasonal address whose window wraps the year end), the newsletter has an
 * opt-in and the mail an opt-out, and a tag marks the major gift prospects.
 */
import { address, type Body } from './data.js';
import type { DemoClient } from './money.js';

/** Besides creates, the stories change a donor (its season and its tag). */
export interface PeopleClient extends DemoClient {
  update(path: string, body: Body, key: string): Promise<Body & { id: number }>;
}

/** Indexes into `donors` (data.ts) of the named donors these stories are about. */
const MARGARET_CHEN = 0;
const ROBERT_ALVAREZ = 1;
const OKAFOR_HOUSEHOLD = 2;
const LINDQVIST_HOUSEHOLD = 3;
const HARTLEY_FOUNDATION = 5;
const MERIDIAN_HEALTH = 6;

/** Members of the named households, as [household index, body]. */
const members: [number, Body][] = [
  [
    OKAFOR_HOUSEHOLD,
    { first_name: 'Samuel', last_name: 'Okafor', email: 'samuel.okafor@example.net' },
  ],
  [OKAFOR_HOUSEHOLD, { first_name: 'Ruth', last_name: 'Okafor', email: 'ruth.okafor@example.net' }],
  [
    OKAFOR_HOUSEHOLD,
    { first_name: 'Chidi', last_name: 'Okafor', email: 'chidi.okafor@students.example.net' },
  ],
  [
    LINDQVIST_HOUSEHOLD,
    {
      first_name: 'Erik',
      last_name: 'Lindqvist',
      email: 'erik.lindqvist@example.org',
      phones: [{ number: '+1 207 555 0117', type: 'mobile' }],
    },
  ],
  [
    LINDQVIST_HOUSEHOLD,
    {
      first_name: 'Astrid',
      last_name: 'Lindqvist',
      email: 'astrid.lindqvist@example.org',
      emails: [{ address: 'a.lindqvist@harborlaw.example.com', type: 'work' }],
    },
  ],
];

export async function recordPeopleStories(
  client: PeopleClient,
  donorIds: readonly number[],
): Promise<void> {
  const donor = (index: number) => donorIds[index]!;

  // One after the other: each join counts the household's members under its lock.
  const memberIds: number[] = [];
  for (const [i, [household, body]] of members.entries()) {
    const created = await client.create(
      '/donors',
      { role: 'Individual', household_id: donor(household), ...body },
      `member-${i}`,
    );
    memberIds.push(created.id);
  }
  const [samuel, ruth, chidi, erik, astrid] = memberIds as [number, number, number, number, number];

  const relationships: Body[] = [
    { donor_id: samuel, related_donor_id: ruth, type: 'spouse_of' },
    { donor_id: samuel, related_donor_id: chidi, type: 'parent_of' },
    { donor_id: erik, related_donor_id: astrid, type: 'spouse_of' },
    {
      donor_id: donor(ROBERT_ALVAREZ),
      related_donor_id: donor(MERIDIAN_HEALTH),
      type: 'employee_of',
      note: 'Matching gifts go through Meridian’s community programme.',
    },
    {
      donor_id: astrid,
      related_donor_id: donor(HARTLEY_FOUNDATION),
      type: 'advisor_of',
      note: 'Outside counsel to the foundation.',
    },
  ];
  // Keys after the first relationship's (seed.ts): relationship 1 stays the trustee.
  for (const [i, body] of relationships.entries())
    await client.create('/relationships', body, `relationship-${i + 1}`);

  const prospects = await client.create(
    '/tags',
    { name: 'Major gift prospect', color: '#1F6FEB' },
    'tag-0',
  );
  // Boston most of the year, Naples from November to March: the window wraps the year end, and
  // `mailing_address` follows the season.
  await client.update(
    `/donors/${donor(MARGARET_CHEN)}`,
    {
      tag_ids: [prospects.id],
      addresses: [
        {
          ...address('400 Gulf Shore Boulevard North', 'Naples', 'FL', '34102'),
          type: 'seasonal',
          seasonal_from: '11-01',
          seasonal_to: '03-31',
        },
      ],
    },
    'margaret-winter-address',
  );

  await client.create(
    `/donors/${donor(MARGARET_CHEN)}/consents`,
    {
      channel: 'email',
      purpose: 'newsletter',
      response: 'opt_in',
      source: 'northbridge.example.edu newsletter sign-up form',
      statement:
        'Yes, send me the Northbridge Giving newsletter by email. I can unsubscribe at any time.',
    },
    'consent-0',
  );
  await client.create(
    `/donors/${donor(ROBERT_ALVAREZ)}/consents`,
    {
      channel: 'mail',
      purpose: null,
      response: 'opt_out',
      source: 'Phone call with the advancement office',
    },
    'consent-1',
  );
}
