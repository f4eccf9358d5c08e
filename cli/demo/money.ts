/**
 * The demo's money stories: what a development office records beyond plain gifts, so that the
 * demo shows every part of the money record (giving.md): a split gift with a soft credit, an
 * employer's matching gift, a gala ticket with a benefit, a partial refund, a gift voided as
 * entered in error, tax receipts (one of them voided and issued again), and pledges paid in
 * installments.
 */
import { daysAgo, type Body } from './data.js';

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
