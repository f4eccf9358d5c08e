/**
 * The demo's money stories: what a development office records beyond plain gifts, so that the
 * demo shows every part of the money record (giving.md): a split gift with a soft credit, an
 * employer's matching gift, a gala ticket with a benefit, a partial refund, a gift voided as
 * entered in error, tax receipts (one of them voided and issued again), monthly giving
 * (recurring gifts and their payments), and pledges paid in installments.
 */
import { daysAgo, isoDate, type Body } from './data.js';

type Created = Body & { id: number };

export interface DemoClient {
  create(path: string, body: Body, key: string): Promise<Created>;
}

export async function recordMoneyStories(
  client: DemoClient,
  donorIds: readonly number[],
  fundId: ReadonlyMap<string, number>,
): Promise<void> {
  const donor = (index: number) => donorIds[index]!;
  const fund = (code: string) => fundId.get(code)!;

  // Margaret Chen splits a major gift between the annual fund and first-generation scholarships;
  // her husband Robert shares the recognition.
  const split = await client.create(
    '/gifts',
    {
      donor_id: donor(0),
      amount: 5000,
      subject: 'Campaign for Northbridge pledge-free gift',
      gift_date: daysAgo(40),
      type: 'bank_transfer',
      designations: [
        { fund_id: fund('ANNUAL'), amount: 3000 },
        { fund_id: fund('FIRSTGEN'), amount: 2000 },
      ],
      soft_credits: [{ donor_id: donor(1), amount: 5000, reason: 'household' }],
    },
    'money-split',
  );

  // Aiko gives to the annual fund; her employer, Cobalt Robotics, matches it one to one.
  const employee = await client.create(
    '/gifts',
    {
      donor_id: donor(8),
      amount: 1000,
      subject: 'Annual Fund gift, matched by her employer',
      gift_date: daysAgo(30),
      type: 'credit_card',
      fund_id: fund('ANNUAL'),
    },
    'money-employee',
  );
  await client.create(
    '/gifts',
    {
      donor_id: donor(7),
      amount: 1000,
      subject: 'Matching gift programme',
      gift_date: daysAgo(12),
      type: 'bank_transfer',
      fund_id: fund('ANNUAL'),
      matches_gift_id: employee.id,
      soft_credits: [{ donor_id: donor(8), amount: 1000, reason: 'matching_gift' }],
    },
    'money-match',
  );

  // A gala ticket: $80 of the $250 paid for the dinner, so only $170 is deductible.
  const gala = await client.create(
    '/gifts',
    {
      donor_id: donor(9),
      amount: 250,
      subject: 'Arts gala ticket',
      gift_date: daysAgo(20),
      type: 'credit_card',
      fund_id: fund('ARTS'),
      benefit_amount: 80,
    },
    'money-gala',
  );

  // A card payment taken twice by mistake: the second is voided, not deleted.
  const duplicate = await client.create(
    '/gifts',
    {
      donor_id: donor(10),
      amount: 75,
      subject: 'Annual Fund gift (duplicate card charge)',
      gift_date: daysAgo(8),
      type: 'credit_card',
      fund_id: fund('ANNUAL'),
    },
    'money-duplicate',
  );
  await client.create(
    `/gifts/${duplicate.id}/void`,
    { reason: 'Card charged twice; the first charge is the gift.' },
    'money-void',
  );

  // Receipts: the split gift and the gala ticket. The gala receipt is voided (the benefit was
  // first entered wrong) and issued again, so receipt 2 is void and 3 replaces it.
  await client.create('/receipts', { gift_id: split.id, issued_on: daysAgo(38) }, 'receipt-split');
  const galaReceipt = await client.create(
    '/receipts',
    { gift_id: gala.id, issued_on: daysAgo(18) },
    'receipt-gala',
  );
  await client.create(
    `/receipts/${galaReceipt.id}/void`,
    { reason: 'Issued before the benefit amount was confirmed.' },
    'receipt-gala-void',
  );
  await client.create('/receipts', { gift_id: gala.id, issued_on: daysAgo(17) }, 'receipt-gala-2');

  // Part of the employee's gift is given back: she asked for $200 of it to be returned.
  await client.create(
    `/gifts/${employee.id}/refunds`,
    { amount: 200, refund_date: daysAgo(5), reason: 'Donor asked for part of the gift back.' },
    'money-refund',
  );

  await recordMonthlyGiving(client, donor, fund);
  await recordPledges(client, donor, fund);
}

/** The first day of the month `back` months before this one, YYYY-MM-DD. */
const monthStart = (back: number) => {
  const now = new Date();
  return isoDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)));
};

/**
 * Monthly giving: the Okafors give $50 on the 1st of every month by card since two months ago,
 * both payments recorded, so they are up to date; Daniel Fitzgerald's weekly gift stopped after
 * its first payment months ago, so it shows as lapsed (GET /recurring-gifts?lapsed=true).
 */
async function recordMonthlyGiving(
  client: DemoClient,
  donor: (index: number) => number,
  fund: (code: string) => number,
): Promise<void> {
  const monthly = await client.create(
    '/recurring-gifts',
    {
      donor_id: donor(2),
      amount: 50,
      frequency: 'monthly',
      start_on: monthStart(2),
      fund_id: fund('ANNUAL'),
    },
    'recurring-okafor',
  );
  for (const back of [2, 1])
    await client.create(
      '/gifts',
      {
        donor_id: donor(2),
        recurring_gift_id: monthly.id,
        amount: 50,
        subject: 'Monthly gift to the Annual Fund',
        gift_date: monthStart(back),
        type: 'credit_card',
        fund_id: fund('ANNUAL'),
      },
      `recurring-okafor-${back}`,
    );

  const weekly = await client.create(
    '/recurring-gifts',
    {
      donor_id: donor(9),
      amount: 15,
      frequency: 'weekly',
      start_on: daysAgo(70),
      fund_id: fund('ATHLETICS'),
    },
    'recurring-fitzgerald',
  );
  await client.create(
    '/gifts',
    {
      donor_id: donor(9),
      recurring_gift_id: weekly.id,
      amount: 15,
      subject: 'Weekly gift to Athletics',
      gift_date: daysAgo(70),
      type: 'credit_card',
      fund_id: fund('ATHLETICS'),
    },
    'recurring-fitzgerald-1',
  );
}

async function recordPledges(
  client: DemoClient,
  donor: (index: number) => number,
  fund: (code: string) => number,
): Promise<void> {
  // Pledges. The first is promised and nothing is paid yet (so the docs' pledge examples, which
  // write off, cancel and change pledge 1, work on it); the second is a three-year promise to
  // the first-generation scholarships, paid quarterly, whose first payment has come in.
  await client.create(
    '/pledges',
    {
      donor_id: donor(2),
      amount: 1200,
      pledge_date: daysAgo(20),
      fund_id: fund('ANNUAL'),
      schedule: { frequency: 'monthly', installments: 12, first_due_on: daysAgo(10) },
    },
    'money-pledge-new',
  );
  const campaign = await client.create(
    '/pledges',
    {
      donor_id: donor(0),
      amount: 30000,
      pledge_date: daysAgo(100),
      designations: [
        { fund_id: fund('FIRSTGEN'), amount: 20000 },
        { fund_id: fund('ANNUAL'), amount: 10000 },
      ],
      schedule: { frequency: 'quarterly', installments: 12, first_due_on: daysAgo(95) },
    },
    'money-pledge-campaign',
  );
  // Without designations of its own, the payment is split as the pledge is.
  await client.create(
    '/gifts',
    {
      donor_id: donor(0),
      amount: 2500,
      subject: 'First installment of the campaign pledge',
      gift_date: daysAgo(94),
      type: 'bank_transfer',
      pledge_id: campaign.id,
    },
    'money-pledge-payment',
  );
}
